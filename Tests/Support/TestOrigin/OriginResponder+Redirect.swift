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
