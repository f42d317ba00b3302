import Foundation

/// The request line and header fields of one HTTP/1.x request, before its body is read.
struct RequestHead {
    var method: String
    var target: String
    var version: String
    var headers: [(name: String, value: String)]

    /// Parses the bytes before the blank line (without the final CRLF CRLF).
    static func parse(_ bytes: ArraySlice<UInt8>) throws -> RequestHead {
        guard let text = String(validating: bytes, as: UTF8.self) ?? String(bytes: bytes, encoding: .isoLatin1) else {
            throw OriginError.malformedRequest("head is not text")
        }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        // RFC 9112 §2.2: ignore at least one empty line before the request line.
        while lines.first?.isEmpty == true { lines = lines.dropFirst() }
        guard let requestLine = lines.popFirst() else { throw OriginError.malformedRequest("empty head") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts[2].hasPrefix("HTTP/1.") else {
            throw OriginError.malformedRequest("bad request line \"\(requestLine)\"")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw OriginError.malformedRequest("header line without colon")
            }
            let name = line[..<colon]
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else {
                throw OriginError.malformedRequest("bad header name \"\(name)\"")
            }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: [" ", "\t"])
            headers.append((String(name), value))
        }
        return RequestHead(method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers)
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// How the body is framed (RFC 9112 §6.3): chunked wins over Content-Length.
    func bodyFraming() throws -> BodyFraming {
        if let encoding = header("Transfer-Encoding") {
            guard encoding.lowercased().split(separator: ",").last?.trimmingCharacters(in: [" ", "\t"]) == "chunked" else {
                throw OriginError.malformedRequest("unsupported Transfer-Encoding \(encoding)")
            }
            return .chunked
        }
        if let length = header("Content-Length") {
            guard let count = Int(length.trimmingCharacters(in: [" ", "\t"])), count >= 0 else {
                throw OriginError.malformedRequest("bad Content-Length \(length)")
            }
            return count == 0 ? .none : .length(count)
        }
        return .none
    }

    /// Whether the client waits for `100 Continue` before sending its body.
    var expectsContinue: Bool {
        version == "HTTP/1.1" && header("Expect")?.lowercased() == "100-continue"
    }
}

enum BodyFraming: Equatable {
    case none
    case length(Int)
    case chunked
}
