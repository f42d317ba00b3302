/// Why text is not an absolute http(s) URL curl would fetch.
public enum HTTPURLProblem: Error, Sendable, Equatable {
    case tooLong(maximum: Int)
    case spacesOrControlCharacters
    case notAURL
    case scheme(String)
    case noHost
    /// A host name DNS cannot carry (over 253 bytes, or a label over 63), or not in ASCII.
    case host
    case port
    /// The user name or password decodes to a NUL, which curl will not send.
    case credentials
}

extension CurlURL {
    /// Parses `text` as an absolute http or https URL with a host, with curl's own parser.
    public init(httpURL text: String, maximumLength: Int) throws(HTTPURLProblem) {
        guard text.utf8.count <= maximumLength else { throw .tooLong(maximum: maximumLength) }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { throw .spacesOrControlCharacters }
        // curl repairs "http:/host" and "http:///host"; Ferry takes only what it would print back.
        let bytes = Array(text.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes.count > colon + 3,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/"), bytes[colon + 3] != UInt8(ascii: "/")
        else { throw .notAURL }
        let parsed: CurlURL
        do {
            parsed = try CurlURL(parsing: text)
        } catch {
            throw .notAURL
        }
        guard parsed.scheme == "http" || parsed.scheme == "https" else { throw .scheme(parsed.scheme) }
        guard !parsed.host.isEmpty else { throw .noHost }
        // curl takes longer names, but no resolver does; and the name is part of indexes that
        // refuse entries over about 2.7 KB (a 500, and a task that could never be claimed).
        // This libcurl has no IDN support: a name outside ASCII never resolves.
        let host = parsed.host.utf8
        guard host.count <= 253, host.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
              parsed.host.hasPrefix("[") || host.split(separator: UInt8(ascii: ".")).allSatisfy({ $0.count <= 63 })
        else { throw .host }
        if let port = parsed.port, !(1...65535).contains(port) { throw .port }
        guard !parsed.credentialsHoldNUL else { throw .credentials }
        self = parsed
    }
}
