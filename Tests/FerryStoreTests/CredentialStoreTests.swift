import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("CredentialStore: a session's credentials by protection space")
struct CredentialStoreTests {
    @Test("credentials set at once for one protection space: each replaces the one before, none fails")
    func concurrentSetsOfOneSpace() async throws {
        try await StoreFixture.with { fixture in
            let store = fixture.database.credentials
            let (tenantID, sessionID) = (fixture.tenant.id, fixture.session.id)
            let space = ProtectionSpace(host: "h.example", port: 443, protocol: "https", realm: nil, authenticationMethod: .default)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        _ = try await store.set(tenantID: tenantID, sessionID: sessionID, space: space, user: "u\(index)", password: "p")
                    }
                }
                try await group.waitForAll()
            }
            let stored = try await store.list(tenantID: tenantID, sessionID: sessionID)
            #expect(stored.count == 1)
        }
    }
}
