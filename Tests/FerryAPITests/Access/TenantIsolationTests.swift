import FerryCore
import Testing

@Suite("Another tenant's ids answer 404 on every route, exactly as ids that do not exist", .sharedHarnesses)
struct TenantIsolationTests {
    @Test("another tenant's ids are not found", arguments: TenantRoute.withIDs)
    func anotherTenantsIDsAreNotFound(_ route: TenantRoute) async throws {
        try await APIHarness.run { api in
            let owner = try await api.makeTenant(name: "owner")
            let intruder = try await api.makeTenant(name: "intruder")
            _ = try await TenantRoute.IDs.make(by: intruder)
            let ids = try await TenantRoute.IDs.make(by: owner)
            let before = try await api.rowCounts()

            let reply = try await route.send(with: intruder, ids: ids)
            let unknown = try await route.send(with: intruder, ids: .unknown)

            let problem = expectProblem(reply, status: .notFound)
            #expect(problem?.detail == "No such \(route.resource).", "the tenant scoping answered, not a later check")
            #expect(ids.replacing(in: reply.text, with: .unknown) == unknown.text, "indistinguishable from ids that do not exist")
            #expect(try await api.rowCounts() == before)
            let untouched = try await owner.task(ids.task)
            #expect(untouched.state == "suspended")
            #expect(untouched.error == nil)
            #expect(try await owner.session(ids.session).state == "valid")
            let ownersView = try await route.send(with: owner, ids: ids)
            #expect(ownersView.problem?.detail != problem?.detail, "the ids exist for their owner: \(ownersView)")
        }
    }

    @Test("lists show only the caller's sessions and tasks")
    func listsAreScoped() async throws {
        try await APIHarness.run { api in
            let owner = try await api.makeTenant(name: "owner")
            let intruder = try await api.makeTenant(name: "intruder")
            let session = try await owner.createSession()
            _ = try await owner.createTask(in: session.id, ["kind": "data", "request": ["url": "http://example.com/a"]])
            let own = try await intruder.createSession()

            #expect(try await intruder.sessions().data.map(\.id) == [own.id])
            // Another tenant's session as a cursor: refused exactly as one that names nothing.
            let foreign = try await intruder.send(.get, "/v1/sessions?after=\(session.id)")
            let unknown = try await intruder.send(.get, "/v1/sessions?after=ses_unknown")
            let problem = expectProblem(foreign, status: .badRequest, field: "query.after")
            #expect(problem?.detail == unknown.problem?.detail)
            #expect(try await intruder.tasks(in: own.id).data.isEmpty)
        }
    }

    @Test("the same Idempotency-Key in two tenants makes two tasks")
    func idempotencyKeysAreScoped() async throws {
        try await APIHarness.run { api in
            let first = try await api.makeTenant(name: "first")
            let second = try await api.makeTenant(name: "second")
            let body: JSONValue = ["kind": "data", "request": ["url": "http://example.com/a"]]

            let a = try await first.createTask(in: try await first.createSession().id, body, idempotencyKey: "order-42")
            let b = try await second.createTask(in: try await second.createSession().id, body, idempotencyKey: "order-42")

            #expect(a.id != b.id)
        }
    }

    @Test("the operator's support view of a task keeps the tenant's credentials and resume data back, also once it ran")
    func supportViewHidesCredentials() async throws {
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let headers: JSONValue = ["Authorization": "Bearer s3cr3t", "Cookie": "id=s3cr3t", "X-Trace": "t-1"]
            let task = try await tenant.createTask(in: session.id, [
                "kind": "download", "request": ["url": "http://ada:s3cr3t@example.com/a", "allHTTPHeaderFields": headers],
            ])
            let seen = try await api.operatorClient.call(.get, "/admin/v1/tasks/\(task.id)", expecting: .ok, as: JSONValue.self)
            #expect(seen["tenantId"]?.stringValue == tenant.tenantID)
            let request = try #require(seen["task"]?["originalRequest"])
            #expect(request["allHTTPHeaderFields"] == ["Authorization": "[redacted]", "Cookie": "[redacted]", "X-Trace": "t-1"])
            #expect(request["url"] == "http://ada:redacted@example.com/a")
            #expect(!String(decoding: seen.serialized(), as: UTF8.self).contains("s3cr3t"))
            // The tenant's own view is as it sent it.
            #expect(try await tenant.task(task.id).originalRequest["allHTTPHeaderFields"] == headers)

            // Run (nothing listens on port 1): the error repeats the URL.
            let failed = try await tenant.createTask(in: session.id, [
                "kind": "download", "request": ["url": "http://ada:s3cr3t@127.0.0.1:1/a"], "resume": true,
            ])
            #expect(try await tenant.task(failed.id, wait: 15).state == "completed")
            let ran = try await api.operatorClient.call(.get, "/admin/v1/tasks/\(failed.id)", expecting: .ok, as: JSONValue.self)
            #expect(ran["task"]?["error"]?["failingURL"] == "http://ada:redacted@127.0.0.1:1/a")
            #expect(!String(decoding: ran.serialized(), as: UTF8.self).contains("s3cr3t"))
        }
    }
}
