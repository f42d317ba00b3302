extension OriginResponder {
    /// Answers with a redirect to `location` (sent verbatim, relative or absolute) and a short
    /// body, as real origins do.
    public func redirect(to location: String, status: Int = 302) throws {
        try respond(
            status: status,
            headers: [("Location", location), ("Content-Type", "text/plain")],
            body: Array("Redirecting to \(location)\n".utf8)
        )
    }
}

extension OriginResponder {
    /// A redirect whose chunked body never ends, until the client hangs up or the origin stops:
    /// a client must stop reading it at some bound and follow the redirect.
    public func redirectWithEndlessBody(to location: String, status: Int = 302) throws {
        try writeHead(status: status, headers: [("Location", location), ("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
        let chunk = Array(repeating: UInt8(ascii: "x"), count: 64 * 1024)
        while !connection.core.isStopping {
            try writeChunk(chunk)
        }
    }
}
