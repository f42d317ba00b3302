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

    @Test("a realm of \"\" and no realm are one protection space: the credential set last is stored whole, realm included")
    func emptyRealmAndNoRealmReplaceEachOther() async throws {
        try await StoreFixture.with { fixture in
            let store = fixture.database.credentials
            let (tenantID, sessionID) = (fixture.tenant.id, fixture.session.id)
            func space(realm: String?) -> ProtectionSpace {
                ProtectionSpace(host: "h.example", port: 443, protocol: "https", realm: realm, authenticationMethod: .default)
            }
            _ = try await store.set(tenantID: tenantID, sessionID: sessionID, space: space(realm: ""), user: "a", password: "p")
            let answered = try await store.set(tenantID: tenantID, sessionID: sessionID, space: space(realm: nil), user: "b", password: "q")
            let stored = try await store.list(tenantID: tenantID, sessionID: sessionID)
            #expect(stored.count == 1)
            #expect(stored.first?.protectionSpace == answered.protectionSpace, "what the answer said is what is stored")
            #expect(stored.first?.user == "b")
        }
    }
}
