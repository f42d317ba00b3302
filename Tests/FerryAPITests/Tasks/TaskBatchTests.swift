import FerryCore
import HTTPTypes
import Testing

@Suite("POST /v1/sessions/{id}/tasks/batch: many tasks in one request, all or none", .sharedHarnesses)
struct TaskBatchTests {
    private struct BatchReply: Decodable {
        var data: [TaskReply]
    }

    private static func download(_ index: Int) -> JSONValue {
        ["kind": "download", "request": ["url": .string("http://example.com/files/\(index).bin")], "taskDescription": .string("file \(index)")]
    }

    @Test("the tasks are created in order, with consecutive taskIdentifiers after the session's earlier ones")
    func createsInOrder() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            _ = try await tenant.createTask(in: session.id, Self.download(0))
            let items: [JSONValue] = (1...3).map(Self.download) + [
                ["kind": "data", "request": ["url": "http://example.com/post", "httpMethod": "POST", "httpBody": "aGVsbG8="], "resume": true],
            ]
            let batch = try await tenant.call(
                .post, "/v1/sessions/\(session.id)/tasks/batch", json: ["tasks": .array(items)], expecting: .created, as: BatchReply.self
            )
            #expect(batch.data.map(\.taskIdentifier) == [2, 3, 4, 5])
            #expect(batch.data.prefix(3).map(\.taskDescription) == ["file 1", "file 2", "file 3"])
            #expect(batch.data.prefix(3).allSatisfy { $0.state == "suspended" && $0.sessionId == session.id })
            #expect(batch.data[3].state == "running")
            #expect(try await tenant.tasks(in: session.id).data.dropFirst().map(\.id) == batch.data.map(\.id))
        }
    }

    @Test("one bad item refuses the batch, naming the item's field, and writes nothing", arguments: [
        (["tasks": []] as JSONValue, "tasks"),
        (["tasks": .array(Array(repeating: download(1), count: 1001))], "tasks"),
        (["tasks": [download(1)], "extra": true], "extra"),
        (["tasks": [download(1), ["kind": "download", "request": ["url": "ftp://example.com/x"]]]], "tasks[1].request.url"),
        (["tasks": [download(1), download(2), ["kind": "download"]]], "tasks[2].request"),
        (["tasks": [["kind": "download", "request": ["url": "http://example.com/a"], "delegate": ["url": "http://example.com/hook"]]]], "tasks[0].delegate"),
        (["tasks": [["kind": "upload", "request": ["url": "http://example.com/a", "httpMethod": "PUT"], "body": ["text": "x"]]]], "tasks[0].body"),
        (["tasks": [["kind": "download", "resumeData": "abc"]]], "tasks[0].resumeData"),
        (["tasks": [["kind": "data", "request": ["url": "http://example.com/a"], "priority": 2]]], "tasks[0].priority"),
    ] as [(JSONValue, String)])
    func badItemRefusesAll(body: JSONValue, field: String) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let before = try await api.rowCounts()
            let reply = try await tenant.send(.post, "/v1/sessions/\(session.id)/tasks/batch", json: body)
            expectProblem(reply, status: .badRequest, field: field)
            #expect(try await api.rowCounts() == before)
        }
    }

    @Test("an invalidated session refuses the batch with 409; another tenant's session is 404")
    func sessionRefusals() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            _ = try await tenant.call(.post, "/v1/sessions/\(session.id)/finishTasksAndInvalidate", json: [:], expecting: .ok, as: SessionReply.self)
            expectProblem(try await tenant.send(.post, "/v1/sessions/\(session.id)/tasks/batch", json: ["tasks": [Self.download(1)]]), status: .conflict)
            let stranger = try await api.makeTenant()
            let theirs = try await stranger.createSession()
            expectProblem(try await tenant.send(.post, "/v1/sessions/\(theirs.id)/tasks/batch", json: ["tasks": [Self.download(1)]]), status: .notFound)
            #expect(try await stranger.tasks(in: theirs.id).data.isEmpty)
        }
    }

    @Test("an Idempotency-Key covers the batch: a retry answers the same tasks; another body under the key is 422")
    func idempotentRetry() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let key: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "batch-1"]
            let body: JSONValue = ["tasks": .array((1...3).map(Self.download))]
            let first = try await tenant.call(.post, "/v1/sessions/\(session.id)/tasks/batch", json: body, headers: key, expecting: .created, as: BatchReply.self)
            let counts = try await api.rowCounts()
            let retry = try await tenant.call(.post, "/v1/sessions/\(session.id)/tasks/batch", json: body, headers: key, expecting: .ok, as: BatchReply.self)
            #expect(retry.data.map(\.id) == first.data.map(\.id))
            #expect(try await api.rowCounts() == counts, "the retry wrote nothing")
            let other = try await tenant.send(.post, "/v1/sessions/\(session.id)/tasks/batch", json: ["tasks": [Self.download(9)]], headers: key)
            expectProblem(other, status: .unprocessableContent, field: "Idempotency-Key")
        }
    }
}
