import FerryCore
import Testing

@Suite("Session conflicts: invalidated sessions refuse tasks, racing background sessions re-attach", .sharedHarnesses)
struct SessionConflictTests {
    @Test("an invalidated session refuses new tasks with 409, and nothing is written", arguments: ["finishTasksAndInvalidate", "invalidateAndCancel"])
    func invalidatedSessionRefusesTasks(_ invalidation: String) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let invalidated = try await tenant.call(.post, "/v1/sessions/\(session.id)/\(invalidation)", json: [:], expecting: .ok, as: SessionReply.self)
            #expect(invalidated.state != "valid")
            let before = try await api.rowCounts()

            let reply = try await tenant.send(.post, "/v1/sessions/\(session.id)/tasks", json: ["kind": "data", "request": ["url": "http://example.com/a"]])

            expectProblem(reply, status: .conflict)
            #expect(try await api.rowCounts() == before)
        }
    }

    @Test("concurrent creations of one background session all re-attach to one session, never a 5xx")
    func racingBackgroundSessions() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let body: JSONValue = ["configuration": ["kind": "background", "identifier": "raced"]]

            let replies = try await withThrowingTaskGroup(of: Reply.self, returning: [Reply].self) { group in
                for _ in 0..<8 {
                    group.addTask { try await tenant.send(.post, "/v1/sessions", json: body) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }

            #expect(replies.allSatisfy { $0.status == .created || $0.status == .ok }, "\(replies.map(\.status.code))")
            let ids = Set(replies.compactMap { try? $0.decode(SessionReply.self).id })
            #expect(ids.count == 1)
            #expect(replies.filter { $0.status == .created }.count == 1)
        }
    }
}
