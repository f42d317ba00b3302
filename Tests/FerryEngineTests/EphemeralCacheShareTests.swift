@testable import FerryEngine
import FerryCore
import Foundation
import Testing

/// The process's memory for ephemeral sessions' URL caches is shared by all tenants; a tenant
/// that fills it pushes out its own entries, never those of a tenant holding less.
@Suite("Ephemeral URL caches: one tenant cannot evict another's entries")
struct EphemeralCacheShareTests {
    private func entry(at second: Int) -> CachedResponse {
        CachedResponse(
            url: "https://origin.example/\(second)", request: TransferRequest(url: "https://origin.example/\(second)"),
            head: ResponseHead(statusCode: 200, fields: [("Cache-Control", "max-age=60")]),
            requestTime: Date(timeIntervalSince1970: Double(second)), responseTime: Date(timeIntervalSince1970: Double(second)),
            bodyKey: "cch_\(second)", bodySize: 100
        )
    }

    private func store(_ caches: inout MemoryCaches, at second: Int, session: String, tenant: String, bytes: Int = 100) {
        caches.store(
            entry(at: second), body: Array(repeating: 0, count: bytes), key: "GET /\(second)", sessionID: session, tenantID: tenant,
            sessionCapacity: 1_000, totalCapacity: 500
        )
    }

    @Test("a tenant filling the total share evicts its own oldest entries, across its sessions")
    func heaviestTenantMakesRoom() {
        var caches = MemoryCaches()
        // The other tenant stores first, so its entry is the oldest of all.
        store(&caches, at: 0, session: "quiet", tenant: "tenant-b")
        for second in 1...4 { store(&caches, at: second, session: "busy-\(second % 2)", tenant: "tenant-a") }
        #expect(caches.totalBytes == 500)
        store(&caches, at: 5, session: "busy-0", tenant: "tenant-a")
        store(&caches, at: 6, session: "busy-1", tenant: "tenant-a")
        #expect(caches.totalBytes == 500)
        #expect(caches.sessions["quiet"]?["GET /0"] != nil, "the quiet tenant's entry was evicted by the busy one")
        #expect(caches.bytesByTenant == ["tenant-a": 400, "tenant-b": 100])
        // Tenant a's two oldest went, one from each session.
        #expect(caches.sessions["busy-1"]?["GET /1"] == nil)
        #expect(caches.sessions["busy-0"]?["GET /2"] == nil)
        #expect(caches.sessions["busy-1"]?["GET /3"] != nil)
    }

    @Test("when the tenant storing holds the least, the heaviest makes room")
    func lighterTenantGetsRoom() {
        var caches = MemoryCaches()
        for second in 0..<5 { store(&caches, at: second, session: "a", tenant: "tenant-a") }
        store(&caches, at: 5, session: "b", tenant: "tenant-b")
        #expect(caches.bytesByTenant == ["tenant-a": 400, "tenant-b": 100])
        #expect(caches.sessions["a"]?["GET /0"] == nil)
        #expect(caches.sessions["b"]?["GET /5"] != nil)
    }

    @Test("on a tie the tenant storing makes room, not the one it has drawn level with")
    func tieGoesToTheStoringTenant() {
        var caches = MemoryCaches()
        store(&caches, at: 0, session: "a", tenant: "tenant-a", bytes: 250)
        store(&caches, at: 1, session: "b", tenant: "tenant-b", bytes: 150)
        store(&caches, at: 2, session: "c", tenant: "tenant-c", bytes: 100)
        store(&caches, at: 3, session: "b", tenant: "tenant-b", bytes: 100)
        #expect(caches.sessions["a"]?["GET /0"] != nil, "the tenant drawn level with lost its entry")
        #expect(caches.bytesByTenant == ["tenant-a": 250, "tenant-b": 100, "tenant-c": 100])
    }

    @Test("a session past its own capacity pushes out its own oldest entries only")
    func sessionCapacity() {
        var caches = MemoryCaches()
        func store(_ second: Int, session: String) {
            caches.store(
                entry(at: second), body: Array(repeating: 0, count: 400), key: "GET /\(second)", sessionID: session, tenantID: "tenant-a",
                sessionCapacity: 1_000, totalCapacity: 10_000
            )
        }
        store(0, session: "other")
        for second in 1...3 { store(second, session: "full") }
        #expect(caches.sessions["full"]?.keys.sorted() == ["GET /2", "GET /3"])
        #expect(caches.sessions["other"]?["GET /0"] != nil)
        #expect(caches.totalBytes == 1_200)
    }
}
