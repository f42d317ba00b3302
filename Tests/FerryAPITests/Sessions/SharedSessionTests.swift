import FerryCore
import Testing
import TestOrigin

/// `URLSession.shared`: `/v1/sessions/shared` is each tenant's own default session.
@Suite("Every tenant has a shared session, made on first use, that cannot be invalidated", .sharedHarnesses)
struct SharedSessionTests {
    @Test("`shared` is one default session per tenant, the same on every use, listed with the others")
    func stableAndDefault() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let other = try await api.makeTenant(name: "other")
            #expect(try await tenant.sessions().data.isEmpty, "nothing is made before first use")

            let shared = try await tenant.session("shared")
            #expect(shared.id.hasPrefix("ses_"))
            #expect(shared.state == "valid")
            #expect(shared.configuration["kind"] == "default")
            #expect(shared.configuration["timeoutIntervalForRequest"] == 60)
            #expect(shared.configuration["httpMaximumConnectionsPerHost"] == 6)
            #expect(try await tenant.session("shared").id == shared.id)
            #expect(try await tenant.session(shared.id).id == shared.id)
            #expect(try await tenant.sessions().data.map(\.id) == [shared.id])

            // Tenant isolation: the other tenant's `shared` is its own; this one's id is not found.
            let othersShared = try await other.session("shared")
            #expect(othersShared.id != shared.id)
            expectProblem(try await other.send(.get, "/v1/sessions/\(shared.id)"), status: .notFound)
            expectProblem(try await tenant.send(.get, "/v1/sessions/\(othersShared.id)"), status: .notFound)
        }
    }

    @Test("finishTasksAndInvalidate and invalidateAndCancel answer 409 and change nothing")
    func cannotBeInvalidated() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let task = try await tenant.createTask(in: "shared", ["kind": "data", "request": ["url": "http://example.com/a"]])
            for name in ["finishTasksAndInvalidate", "invalidateAndCancel"] {
                expectProblem(try await tenant.send(.post, "/v1/sessions/shared/\(name)"), status: .conflict)
                expectProblem(try await tenant.send(.post, "/v1/sessions/\(task.sessionId)/\(name)"), status: .conflict)
            }
            #expect(try await tenant.session("shared").state == "valid")
            #expect(try await tenant.task(task.id).state == "suspended")
            // It keeps taking tasks.
            _ = try await tenant.createTask(in: "shared", ["kind": "data", "request": ["url": "http://example.com/b"]])
            #expect(try await tenant.tasks(in: "shared").data.count == 2)
        }
    }

    @Test("a download in the shared session transfers like any other")
    func transfers() async throws {
        let body = TestOrigin.pattern(count: 100_000, seed: 11)
        let origin = try TestOrigin { request, responder in try responder.serveResource(body, for: request) }
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let task = try await tenant.createTask(in: "shared", ["kind": "download", "request": ["url": .string(origin.url("/file"))], "resume": true])
            let done = try await tenant.task(task.id, wait: 20)
            #expect(done.state == "completed")
            #expect(done.error == nil)
            #expect(try await tenant.file(task.id).body == body)
            #expect(done.sessionId == (try await tenant.session("shared")).id)
        }
    }
}
