import FerryCore
import FerryStore
import Foundation
import Testing

@Suite("CacheStore.put: entries of a session's URL cache")
struct CacheStoreTests {
    private func entry(bodyKey: String, size: Int64 = 10) -> CachedResponse {
        CachedResponse(
            url: "https://origin.example/same", request: TransferRequest(url: "https://origin.example/same"),
            head: ResponseHead(statusCode: 200, fields: [("Cache-Control", "max-age=60")]),
            requestTime: Date(), responseTime: Date(), bodyKey: bodyKey, bodySize: size
        )
    }

    @Test("transfers of the same URL ending together: each put succeeds, one entry stays, every other body is dropped")
    func concurrentPutsOfOneKey() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            let cache = fixture.database.cache
            let sessionID = fixture.session.id
            let keys = (0..<8).map { "cch_\($0)" }
            let dropped = try await withThrowingTaskGroup(of: [String].self) { group in
                for key in keys {
                    group.addTask {
                        try await cache.put([CacheStore.Put(sessionID: sessionID, key: "GET https://origin.example/same", entry: entry(bodyKey: key))], capacity: 1 << 20)[0]
                    }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            let kept = try #require(try await cache.entry(sessionID: sessionID, key: "GET https://origin.example/same"))
            #expect(Set(dropped + [kept.bodyKey]) == Set(keys), "every body but the kept one is reported dropped, once")
            #expect(dropped.count == keys.count - 1)
        }
    }

    @Test("a batch of puts: the last put of a key wins, a replaced entry's body is dropped, and the least recently used go past the capacity")
    func batchedPuts() async throws {
        try await StoreFixture.with { fixture in
            let cache = fixture.database.cache
            let sessionID = fixture.session.id
            func put(_ key: String, _ bodyKey: String) -> CacheStore.Put {
                CacheStore.Put(sessionID: sessionID, key: key, entry: entry(bodyKey: bodyKey))
            }
            // Each body is 10 bytes: a 25-byte cache keeps two entries.
            #expect(try await cache.put([put("a", "cch_a1")], capacity: 25) == [[]])
            let dropped = try await cache.put([put("a", "cch_a2"), put("b", "cch_b"), put("a", "cch_a3"), put("c", "cch_c")], capacity: 100)
            #expect(dropped == [["cch_a2"], [], ["cch_a1"], []])
            #expect(try await cache.entry(sessionID: sessionID, key: "a")?.bodyKey == "cch_a3")
            _ = try await cache.entry(sessionID: sessionID, key: "b")  // used now: "c" is the least recently used
            let evicted = try await cache.put([put("d", "cch_d")], capacity: 25)
            #expect(Set(evicted[0]) == ["cch_a3", "cch_c"])
            #expect(try await cache.entry(sessionID: sessionID, key: "b")?.bodyKey == "cch_b")
            #expect(try await cache.entry(sessionID: sessionID, key: "d")?.bodyKey == "cch_d")
        }
    }

    @Test("lookups together: answered in their order, nil where nothing is cached, the same key twice found twice")
    func batchedLookups() async throws {
        try await StoreFixture.with { fixture in
            let cache = fixture.database.cache
            let sessionID = fixture.session.id
            _ = try await cache.put(
                ["a", "b"].map { CacheStore.Put(sessionID: sessionID, key: $0, entry: entry(bodyKey: "cch_\($0)")) }, capacity: 1000
            )
            let found = try await cache.entries(["b", "missing", "a", "b"].map { CacheStore.Lookup(sessionID: sessionID, key: $0) })
            #expect(found.map { $0?.bodyKey } == ["cch_b", nil, "cch_a", "cch_b"])
            let elsewhere = try await cache.entries([CacheStore.Lookup(sessionID: "ses_other", key: "a")])
            #expect(elsewhere.map { $0?.bodyKey } == [nil])
        }
    }

    @Test("the bytes a session's cache holds stay exact through puts, replacements of another size, eviction, removal and racing puts")
    func usageFollowsTheEntries() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            let cache = fixture.database.cache
            let sessionID = fixture.session.id
            func usage() async throws -> (counted: Int64?, summed: Int64?) {
                try await fixture.pool.withConnection { connection in
                    let row = try connection.query(
                        """
                        SELECT (SELECT bytes FROM cache_usage WHERE session_id = $1) AS counted,
                               (SELECT sum(body_size)::int8 FROM cache_entries WHERE session_id = $1) AS summed
                        """,
                        [sessionID]
                    )[0]
                    return (try row.decode("counted"), try row.decode("summed"))
                }
            }
            func put(_ key: String, size: Int64) -> CacheStore.Put {
                CacheStore.Put(sessionID: sessionID, key: key, entry: entry(bodyKey: "cch_\(key)_\(size)", size: size))
            }
            _ = try await cache.put([put("a", size: 100), put("b", size: 200)], capacity: 1000)
            #expect(try await usage() == (300, 300))
            _ = try await cache.put([put("a", size: 50)], capacity: 1000)
            #expect(try await usage() == (250, 250))
            _ = try await cache.entry(sessionID: sessionID, key: "b")  // marking an entry used resizes nothing
            // Over capacity: "a" (least recently used) is evicted, "c" and "b" stay.
            let evicted = try await cache.put([put("c", size: 700)], capacity: 900)
            #expect(evicted == [["cch_a_50"]])
            #expect(try await usage() == (900, 900))
            _ = try await cache.remove(sessionID: sessionID, keys: ["b"])
            #expect(try await usage() == (700, 700))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<16 {
                    group.addTask { _ = try await cache.put([put("k\(index % 4)", size: Int64(index + 1))], capacity: 1 << 20) }
                }
                try await group.waitForAll()
            }
            let raced = try await usage()
            #expect(raced.counted == raced.summed)
        }
    }
}
