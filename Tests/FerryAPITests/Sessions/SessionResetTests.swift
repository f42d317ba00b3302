import FerryCore
import HTTPTypes
import Testing
import TestOrigin

@Suite("POST /v1/sessions/{id}/reset and /flush", .sharedHarnesses)
struct SessionResetTests {
    @Test("after a reset, a data task's body and a download's file answer 410, not an empty 200 or a 404")
    func removedContentIsGone() async throws {
        let origin = try TestOrigin { _, responder in
            try responder.respond(status: 200, headers: [("Content-Type", "text/plain")], body: Array("hello, ferry".utf8))
        }
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let data = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": .string(origin.url("/a"))], "resume": true])
            let download = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": .string(origin.url("/b"))], "resume": true])
            #expect(try await tenant.task(data.id, wait: 20).state == "completed")
            #expect(try await tenant.task(download.id, wait: 20).state == "completed")
            #expect(try await tenant.data(data.id) == Array("hello, ferry".utf8))
            #expect(try await tenant.file(download.id).status == .ok)

            #expect(try await tenant.send(.post, "/v1/sessions/\(session.id)/reset").status == .ok)
            expectProblem(try await tenant.send(.get, "/v1/tasks/\(data.id)/data"), status: .gone)
            expectProblem(try await tenant.file(download.id), status: .gone)
            // A task of the session completed after the reset has its content.
            let later = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": .string(origin.url("/c"))], "resume": true])
            #expect(try await tenant.task(later.id, wait: 20).state == "completed")
            #expect(try await tenant.data(later.id) == Array("hello, ferry".utf8))
        }
    }

    @Test("flush answers the session; another tenant's session is not found")
    func flushAnswersTheSession() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let other = try await api.makeTenant(name: "other")
            let session = try await tenant.createSession()
            let reply = try await tenant.send(.post, "/v1/sessions/\(session.id)/flush")
            #expect(reply.status == .ok)
            #expect(try reply.decode(SessionReply.self).id == session.id)
            expectProblem(try await other.send(.post, "/v1/sessions/\(session.id)/flush"), status: .notFound)
        }
    }
}
