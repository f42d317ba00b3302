import Foundation

/// Writes the response to one request, byte by byte if the test wants, including the faults
/// (stalls, truncation, RST) a real origin can produce.
///
/// Used only on the connection's thread, inside the handler. After the handler returns, the
/// connection is kept alive only if the response was completely framed (`Content-Length`
/// fully written, chunks ended, or no body by definition); otherwise it is closed, which is
/// what a close-delimited or deliberately truncated response needs.
public final class OriginResponder {
    /// The request being answered.
    public let request: OriginRequest
    let connection: OriginConnection

    private(set) var isHeadSent = false
    private var declaredLength: Int?
    private(set) var hasBody = true
    private var isChunked = false
    private var chunksEnded = false
    private var bodyBytesWritten = 0
    private var closesAfterResponse = false

    init(request: OriginRequest, connection: OriginConnection) {
        self.request = request
        self.connection = connection
    }

    /// Sends a whole response. Adds `Content-Length` unless `headers` already has one (so a
    /// test can declare a wrong length on purpose) or the status forbids it (1xx, 204, 304).
    /// For HEAD only the head is sent.
    public func respond(status: Int, headers: [(String, String)] = [], body: [UInt8]) throws {
        try respond(status: status, headers: headers, body: body, faults: BodyFaults())
    }

    /// Like `respond(status:headers:body:)`, with `faults` applied to the body.
    public func respond(status: Int, headers: [(String, String)] = [], body: [UInt8], faults: BodyFaults) throws {
        var headers = headers
        let forbidsLength = status == 204 || status == 304 || (100..<200).contains(status)
        if !forbidsLength && !headers.contains(where: { $0.0.lowercased() == "content-length" }) {
            headers.append(("Content-Length", String(body.count)))
        }
        try writeHead(status: status, headers: headers)
        try write(body, faults: faults)
    }

    /// Sends the status line and `headers` verbatim; the caller chooses the framing
    /// (`Content-Length`, `Transfer-Encoding: chunked`, or neither for a close-delimited body).
    public func writeHead(status: Int, headers: [(String, String)]) throws {
        guard !isHeadSent else { throw OriginError.responseAlreadyStarted }
        let names = headers.map { $0.0.lowercased() }
        let lengths = headers.filter { $0.0.lowercased() == "content-length" }
        declaredLength = lengths.count == 1 ? Int(lengths[0].1.trimmingCharacters(in: .whitespaces)) : nil
        isChunked = headers.contains { $0.0.lowercased() == "transfer-encoding" && $0.1.lowercased().contains("chunked") }
        hasBody = request.method != "HEAD" && status != 204 && status != 304 && !(100..<200).contains(status)
        closesAfterResponse = request.wantsClose
            || headers.contains { $0.0.lowercased() == "connection" && $0.1.lowercased().contains("close") }
        var lines = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for (name, value) in headers {
            lines += "\(name): \(value)\r\n"
        }
        let isCloseDelimited = hasBody && !isChunked && declaredLength == nil
        if (closesAfterResponse || isCloseDelimited) && !names.contains("connection") {
            lines += "Connection: close\r\n"
        }
        lines += "\r\n"
        isHeadSent = true
        try connection.send(Array(lines.utf8)[...])
    }

    /// Sends raw body bytes (already framed by the caller if chunked). Dropped for responses
    /// that have no body (HEAD, 204, 304), so handlers need not special-case HEAD.
    public func write(_ bytes: [UInt8]) throws {
        try write(bytes[...])
    }

    func write(_ bytes: ArraySlice<UInt8>) throws {
        guard isHeadSent else { throw OriginError.malformedRequest("body written before head") }
        guard hasBody else { return }
        try connection.send(bytes)
        bodyBytesWritten += bytes.count
    }

    /// Sends one chunk of a `Transfer-Encoding: chunked` body.
    public func writeChunk(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        try write(Array("\(String(bytes.count, radix: 16))\r\n".utf8) + bytes + Array("\r\n".utf8))
    }

    /// Sends the last chunk, completing a chunked body so the connection can be reused.
    public func endChunks() throws {
        try write(Array("0\r\n\r\n".utf8))
        chunksEnded = true
    }

    /// Stalls the response; returns early if the origin is stopped.
    public func pause(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while !connection.core.isStopping {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return }
            Thread.sleep(forTimeInterval: min(remaining, 0.01))
        }
    }

    /// Aborts the connection with RST (`SO_LINGER` 0, then close), after the client has
    /// acknowledged what was already written.
    public func reset() {
        connection.reset()
    }

    /// Closes the connection with FIN now, possibly mid-body.
    public func close() {
        connection.close()
    }

    /// Whether the client can tell where this response ended without the connection closing.
    var isComplete: Bool {
        guard isHeadSent else { return false }
        guard hasBody else { return true }
        if isChunked { return chunksEnded }
        guard let declaredLength else { return false }
        return bodyBytesWritten == declaredLength
    }

    var keepsConnectionAlive: Bool {
        isComplete && !closesAfterResponse && !connection.isClosed
    }
}
