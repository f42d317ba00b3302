import TestOrigin

/// Polls `condition` every 20 ms until it holds or `limit` passes; answers whether it held.
func becomesTrue(within limit: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

extension TestOrigin {
    /// An origin serving `body` at any path under a strong entity tag (so a download can
    /// resume), at `bytesPerSecond`.
    static func slowly(serving body: [UInt8], etag: String, bytesPerSecond: Int) throws -> TestOrigin {
        try TestOrigin { request, responder in
            try responder.serveResource(body, for: request, etag: etag, bytesPerSecond: bytesPerSecond)
        }
    }
}
