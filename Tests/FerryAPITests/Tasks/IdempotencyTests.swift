import FerryCore
import HTTPTypes
import Testing

@Suite("Idempotency-Key: a retried creation returns the same task; a reused key with another body is refused", .sharedHarnesses)
struct IdempotencyTests {
    static let body: JSONValue = ["kind": "data", "request": ["url": "http://example.com/a"], "taskDescription": "first"]

    @Test("the same key and body answer the same task, 201 then 200, and write one task")
    func retryReturnsTheSameTask() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()

            let first = try await tenant.createTask(in: session.id, Self.body, idempotencyKey: "retry-1")
            let countsAfterFirst = try await api.rowCounts()
            let second = try await tenant.createTask(in: session.id, Self.body, idempotencyKey: "retry-1", expecting: .ok)

            #expect(second.id == first.id)
            #expect(second.taskIdentifier == first.taskIdentifier)
            #expect(try await api.rowCounts() == countsAfterFirst, "the retry wrote nothing")
            #expect(try await tenant.tasks(in: session.id).data.count == 1)
        }
    }

    @Test("the same key with another body is 422 naming Idempotency-Key, and writes nothing")
    func reuseWithAnotherBody() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            _ = try await tenant.createTask(in: session.id, Self.body, idempotencyKey: "reused")
            let before = try await api.rowCounts()

            let reply = try await tenant.send(
                .post, "/v1/sessions/\(session.id)/tasks", json: Self.body.setting("taskDescription", to: "second"),
                headers: [HTTPField.Name("Idempotency-Key")!: "reused"]
            )

            expectProblem(reply, status: .unprocessableContent, field: "Idempotency-Key")
            #expect(try await api.rowCounts() == before)
        }
    }

    @Test("the same key and body sent to another session is refused, not answered with the first session's task")
    func reuseInAnotherSession() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let first = try await tenant.createSession()
            let second = try await tenant.createSession()
            let original = try await tenant.createTask(in: first.id, Self.body, idempotencyKey: "cross-session")

            let reply = try await tenant.send(
                .post, "/v1/sessions/\(second.id)/tasks", json: Self.body, headers: [HTTPField.Name("Idempotency-Key")!: "cross-session"]
            )

            expectProblem(reply, status: .unprocessableContent, field: "Idempotency-Key")
            #expect(try await tenant.tasks(in: second.id).data.isEmpty, "no task was made in the second session")
            #expect(try await tenant.task(original.id).sessionId == first.id)
        }
    }

    static let malformedKeys: [String] = [
        "", " ", "has space", String(repeating: "k", count: 256), "tab\there", "ключ", "emoji-🔑",
    ]

    @Test("a malformed key is 400 naming Idempotency-Key, and writes nothing", arguments: malformedKeys)
    func malformedKey(_ key: String) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let before = try await api.rowCounts()

            let reply = try await tenant.send(
                .post, "/v1/sessions/\(session.id)/tasks", json: Self.body, headers: [HTTPField.Name("Idempotency-Key")!: key]
            )

            expectProblem(reply, status: .badRequest, field: "Idempotency-Key")
            #expect(try await api.rowCounts() == before)
        }
    }

    @Test("concurrent requests with one key create one task")
    func concurrentRequests() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let before = try await api.rowCounts()

            let replies = try await withThrowingTaskGroup(of: Reply.self, returning: [Reply].self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await tenant.send(
                            .post, "/v1/sessions/\(session.id)/tasks", json: Self.body, headers: [HTTPField.Name("Idempotency-Key")!: "race"]
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }

            #expect(replies.filter { $0.status == .created }.count == 1, "\(replies)")
            #expect(replies.filter { $0.status == .ok }.count == 7, "\(replies)")
            let ids = Set(try replies.map { try $0.decode(TaskReply.self).id })
            #expect(ids.count == 1)
            let after = try await api.rowCounts()
            #expect(after.tasks == before.tasks + 1)
            #expect(after.events == before.events + 1)
        }
    }
}
