/// Connection caches kept apart by a key (a session, a tenant), one `CurlShare` each, instead
/// of the one cache a multi handle keeps for all its transfers: a connection opened under one
/// key (with its DNS answers and TLS sessions) is never reused under another.
///
/// Confined to the thread driving the multi handle. A pool unused for `idleLifetime` is
/// dropped, closing its connections once its last transfer is gone; so are the least recently
/// used idle pools past `idleLimit`, which bounds the idle sockets kept for keys that come and
/// go. curl caps each pool's idle connections at the multi handle's `CURLMOPT_MAXCONNECTS`
/// (7.88 counts the cache the connection returns to), so a multi handle keeps about
/// `idleLimit` times that, plus its busy pools'.
public final class CurlConnectionPools {
    private struct Pool {
        let share: CurlShare
        var lastUsed: ContinuousClock.Instant
    }

    private var pools: [String: Pool] = [:]
    private var lastSweep = ContinuousClock.now
    let idleLifetime: Duration
    let idleLimit: Int

    /// curl closes a connection idle for 118 s when it next looks at it (`CURLOPT_MAXAGE_CONN`).
    public init(idleLifetime: Duration = .seconds(120), idleLimit: Int = 16) {
        self.idleLifetime = idleLifetime
        self.idleLimit = idleLimit
    }

    /// The pool of `key`, made on first use.
    public func share(for key: String, now: ContinuousClock.Instant = .now) throws -> CurlShare {
        if let pool = pools[key] {
            pools[key]?.lastUsed = now
            return pool.share
        }
        let share = try CurlShare()
        pools[key] = Pool(share: share, lastUsed: now)
        return share
    }

    /// Forgets the pool of `key`: later transfers get new connections; running ones keep theirs
    /// until they end.
    public func drop(_ key: String) {
        pools[key] = nil
    }

    public var count: Int { pools.count }

    /// At most every few seconds: drops the pools idle too long or past the limit. `busy`: the
    /// keys with a transfer running, whose pools are never dropped.
    public func sweep(busy: () -> Set<String>, now: ContinuousClock.Instant = .now) {
        let isCrowded = pools.count > idleLimit * 2 && now - lastSweep >= .milliseconds(100)
        guard now - lastSweep >= .seconds(5) || isCrowded else { return }
        lastSweep = now
        let busy = busy()
        for key in busy { pools[key]?.lastUsed = now }
        pools = pools.filter { busy.contains($0.key) || now - $0.value.lastUsed < idleLifetime }
        let idle = pools.filter { !busy.contains($0.key) }.sorted { $0.value.lastUsed < $1.value.lastUsed }
        for (key, _) in idle.dropLast(idleLimit) { pools[key] = nil }
    }
}
