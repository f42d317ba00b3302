import CCurl

/// A curl share handle holding a connection cache (with the DNS answers and TLS sessions that
/// go with it) of its own, apart from the multi handle's: the easy handles given the same
/// share reuse each other's connections, and no others.
///
/// Not `Sendable`: its transfers run on one thread. Easy handles keep their share alive
/// (`CurlEasy.use(_:)`), so it is freed, closing its idle connections, after the last of them.
public final class CurlShare {
    let owner: UnsafeMutablePointer<ferry_curl_share>

    public init() throws {
        try CurlGlobal.ensureInitialised()
        guard let owner = ferry_curl_share_new() else {
            throw CurlError(source: .easy, code: Int32(CURLE_OUT_OF_MEMORY.rawValue), message: "curl_share_init failed")
        }
        self.owner = owner
    }

    deinit {
        // In use is impossible (every easy handle using it holds it); were it so, leaking the
        // share is better than freeing memory curl still points to.
        _ = ferry_curl_share_free(owner)
    }
}
