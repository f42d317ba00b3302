import Foundation

/// Reading whole requests (head and de-framed body) off a connection.
extension OriginConnection {
    private static let headLimit = 64 * 1024
    private static let lineLimit = 8 * 1024
    private static let blankLine: [UInt8] = Array("\r\n\r\n".utf8)
    private static let lineEnd: [UInt8] = Array("\r\n".utf8)

    /// The next request, or nil when the client closed the connection between requests.
    func readRequest() throws -> OriginRequest? {
        guard let headLength = try find(Self.blankLine, limit: Self.headLimit) else {
            if unreadCount == 0 || (try? take(unreadCount))?.allSatisfy({ $0 == 13 || $0 == 10 }) == true {
                return nil
            }
            throw OriginError.connectionClosed
        }
        let head = try RequestHead.parse(try take(headLength + Self.blankLine.count).dropLast(Self.blankLine.count))
        let framing = try head.bodyFraming()
        // curl waits up to a second for this before sending the body anyway.
        if framing != .none && head.expectsContinue {
            try send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)[...])
        }
        let body: [UInt8]
        switch framing {
        case .none: body = []
        case .length(let count): body = Array(try take(count))
        case .chunked: body = try readChunkedBody()
        }
        return OriginRequest(
            method: head.method,
            target: head.target,
            headers: head.headers,
            body: body,
            connectionIndex: index,
            version: head.version
        )
    }

    /// Removes chunked framing (RFC 9112 §7.1), discarding chunk extensions and trailers.
    private func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine()
            let sizeText = line.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: [" ", "\t"]) ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw OriginError.malformedRequest("bad chunk size \"\(line)\"")
            }
            if size == 0 {
                while try !readLine().isEmpty {}
                return body
            }
            body.append(contentsOf: try take(size))
            guard try take(2).elementsEqual(Self.lineEnd) else {
                throw OriginError.malformedRequest("chunk data not followed by CRLF")
            }
        }
    }

    private func readLine() throws -> String {
        guard let length = try find(Self.lineEnd, limit: Self.lineLimit) else {
            throw OriginError.connectionClosed
        }
        let bytes = try take(length + Self.lineEnd.count).dropLast(Self.lineEnd.count)
        return String(decoding: bytes, as: UTF8.self)
    }
}
