import Curl
import Testing

@Suite("CurlConnectionPools: a connection cache per key, idle ones dropped")
struct CurlConnectionPoolsTests {
    @Test("idle pools are dropped after their lifetime, and past the limit the least recently used first")
    func idlePoolsAreDropped() throws {
        let pools = CurlConnectionPools(idleLifetime: .seconds(120), idleLimit: 2)
        let start = ContinuousClock.now
        let shares = try (0..<4).map { try pools.share(for: "s\($0)", now: start + .seconds($0 * 10)) }
        #expect(try pools.share(for: "s0", now: start + .seconds(40)) === shares[0], "a session's pool is kept while it is used")
        // Four pools, limit two, s1 busy: of the idle ones the least recently used (s2) goes.
        pools.sweep(busy: { ["s1"] }, now: start + .seconds(50))
        #expect(pools.count == 3)
        #expect(try pools.share(for: "s1", now: start + .seconds(50)) === shares[1])
        #expect(try pools.share(for: "s2", now: start + .seconds(50)) !== shares[2])
        // Past the lifetime, idle pools go even under the limit.
        pools.sweep(busy: { [] }, now: start + .seconds(300))
        #expect(pools.count == 0)
    }
}
