import FerryCore
import FerryStore
import Foundation
import Testing

@Suite("CacheStore.put: entries of a session's URL cache")
struct CacheStoreTests {
    private func entry(bodyKey: String) -> CachedResponse {
        CachedResponse(
            url: "https://origin.example/same", request: TransferRequest(url: "https://origin.example/same"),
            head: ResponseHead(statusCode: 200, fields: [("Cache-Control", "max-age=60")]),
            requestTime: Date(), responseTime: Date(), bodyKey: bodyKey, bodySize: 10
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
                    group.addTask { try await cache.put(sessionID: sessionID, key: "GET https://origin.example/same", entry: entry(bodyKey: key), capacity: 1 << 20) }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            let kept = try #require(try await cache.entry(sessionID: sessionID, key: "GET https://origin.example/same"))
            #expect(Set(dropped + [kept.bodyKey]) == Set(keys), "every body but the kept one is reported dropped, once")
            #expect(dropped.count == keys.count - 1)
        }
    }
}
