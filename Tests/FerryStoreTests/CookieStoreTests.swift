import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("CookieStore: a session's persistent jar")
struct CookieStoreTests {
    @Test("cookies written while the jar is deleted (a session's reset) are written, never a crash")
    func applyRacingReset() async throws {
        try await StoreFixture.with { fixture in
            let store = fixture.database.cookies
            let sessionID = fixture.session.id
            let deadline = ContinuousClock.now + .seconds(2)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    var index = 0
                    while ContinuousClock.now < deadline {
                        index += 1
                        try await store.apply([CookieUpdate(
                            sessionID: sessionID, setCookieFields: ["c\(index)=v"], requestURL: "https://origin.example/",
                            mainDocumentHost: nil, receivedAt: Date()
                        )])
                    }
                }
                group.addTask {
                    while ContinuousClock.now < deadline {
                        _ = try await fixture.execute("DELETE FROM session_cookies WHERE session_id = $1", [sessionID])
                    }
                }
                try await group.waitForAll()
            }
            try await store.apply([CookieUpdate(
                sessionID: sessionID, setCookieFields: ["last=1"], requestURL: "https://origin.example/", mainDocumentHost: nil, receivedAt: Date()
            )])
            #expect(try await store.jar(ofSession: sessionID).cookies.contains { $0.name == "last" })
        }
    }
}
