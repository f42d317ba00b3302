/// `HTTPURLResponse`, as a task's `response`.
public struct HTTPResponseSnapshot: Codable, Sendable, Equatable {
    public var url: String
    public var statusCode: Int
    /// Header fields; repeated fields are joined with ", " as `HTTPURLResponse` does.
    public var allHeaderFields: [String: String]
    public var mimeType: String?
    /// `NSURLResponseUnknownLength` (-1) when the server did not say.
    public var expectedContentLength: Int64
    public var suggestedFilename: String
    public var textEncodingName: String?

    public init(url: String, head: ResponseHead) {
        self.url = url
        statusCode = head.statusCode
        var fields: [String: String] = [:]
        var canonicalNames: [String: String] = [:]
        for (name, value) in head.fields {
            let key = name.lowercased()
            // Keep the spelling of the first occurrence, join later ones into it.
            let canonical = canonicalNames[key] ?? name
            canonicalNames[key] = canonical
            fields[canonical] = fields[canonical].map { "\($0), \(value)" } ?? value
        }
        allHeaderFields = fields
        let contentType = head.value(of: "Content-Type").map(MediaType.init)
        mimeType = contentType?.essence
        textEncodingName = contentType?.parameters["charset"]
        expectedContentLength = head.value(of: "Content-Length").flatMap { Int64($0.trimmingSpaces) } ?? transferSizeUnknown
        suggestedFilename = Self.suggestedFilename(
            contentDisposition: head.value(of: "Content-Disposition"),
            url: url,
            mimeType: mimeType
        )
    }

    public func value(forHTTPHeaderField name: String) -> String? {
        let lowered = name.lowercased()
        return allHeaderFields.first { $0.key.lowercased() == lowered }?.value
    }

    /// `URLResponse.suggestedFilename`: Content-Disposition's filename, else the URL's last path
    /// component, else "Unknown". Never contains a path separator.
    static func suggestedFilename(contentDisposition: String?, url: String, mimeType: String?) -> String {
        if let disposition = contentDisposition.map(MediaType.init) {
            if let extended = disposition.parameters["filename*"], let name = decodeExtendedValue(extended) {
                if let safe = sanitize(name) { return safe }
            }
            if let name = disposition.parameters["filename"], let safe = sanitize(name) { return safe }
        }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let afterScheme = path.components(separatedBy: "://").last ?? path
        let segments = afterScheme.split(separator: "/", omittingEmptySubsequences: true)
        if segments.count > 1, let last = segments.last, let safe = sanitize(String(last).removingPercentEncoding ?? String(last)) {
            return safe
        }
        return "Unknown"
    }

    private static func sanitize(_ name: String) -> String? {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let cleaned = String(last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
        guard !cleaned.isEmpty, cleaned != ".", cleaned != ".." else { return nil }
        return String(cleaned.prefix(255))
    }

    /// RFC 8187 `charset'lang'percent-encoded`.
    private static func decodeExtendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].lowercased() == "utf-8" else { return nil }
        return String(parts[2]).removingPercentEncoding
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (HTTP OWS, RFC 6265 WSP).
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }

    /// Controls other than horizontal tab: refused in header field values (RFC 9110) and in
    /// cookie names and values (RFC 6265bis §5.6).
    var containsControlCharacters: Bool {
        unicodeScalars.contains { ($0.value < 0x20 && $0.value != 0x09) || $0.value == 0x7F }
    }

    /// Percent-decoding without Foundation's `NSString` bridge, so FerryCore stays Foundation-light here.
    var removingPercentEncoding: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
