import FerryCore
import Testing

/// `getTasksWithCompletionHandler` and `getAllTasks`: the session's unfinished tasks only.
@Suite("getTasks and getAllTasks answer the session's unfinished tasks, as URLSession does", .sharedHarnesses)
struct GetTasksTests {
    struct TaskGroups: Decodable, Sendable {
        var dataTasks: [TaskReply]
        var uploadTasks: [TaskReply]
        var downloadTasks: [TaskReply]
    }

    struct AllTasks: Decodable, Sendable {
        var tasks: [TaskReply]
    }

    @Test("three arrays by kind, then one array; completed tasks are left out, the paginated list keeps them")
    func unfinishedOnly() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let url: JSONValue = ["url": "http://example.com/a"]
            // Nothing transfers without an engine: a resumed task stays queued, `running`.
            let data = try await tenant.createTask(in: session.id, ["kind": "data", "request": url])
            let upload = try await tenant.createTask(in: session.id, ["kind": "upload", "request": url, "body": ["text": "hi"]])
            let download = try await tenant.createTask(in: session.id, ["kind": "download", "request": url, "resume": true])
            let finished = try await tenant.createTask(in: session.id, ["kind": "data", "request": url])
            _ = try await tenant.command(.cancel, finished.id)

            let groups = try await tenant.call(.get, "/v1/sessions/\(session.id)/getTasks", expecting: .ok, as: TaskGroups.self)
            #expect(groups.dataTasks.map(\.id) == [data.id])
            #expect(groups.uploadTasks.map(\.id) == [upload.id])
            #expect(groups.downloadTasks.map(\.id) == [download.id])
            #expect(groups.downloadTasks.first?.state == "running")

            let all = try await tenant.call(.get, "/v1/sessions/\(session.id)/getAllTasks", expecting: .ok, as: AllTasks.self)
            #expect(all.tasks.map(\.id) == [data.id, upload.id, download.id])

            // Ferry's own paginated list still has every task.
            #expect(try await tenant.tasks(in: session.id).data.map(\.id) == [data.id, upload.id, download.id, finished.id])
        }
    }

    @Test("an empty session answers empty arrays; unknown query parameters are 400; another tenant's session is 404")
    func edges() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let other = try await api.makeTenant(name: "other")
            let session = try await tenant.createSession()

            let groups = try await tenant.call(.get, "/v1/sessions/\(session.id)/getTasks", expecting: .ok, as: TaskGroups.self)
            #expect(groups.dataTasks.isEmpty && groups.uploadTasks.isEmpty && groups.downloadTasks.isEmpty)
            for name in ["getTasks", "getAllTasks"] {
                expectProblem(try await tenant.send(.get, "/v1/sessions/\(session.id)/\(name)?state=running"), status: .badRequest, field: "query.state")
                expectProblem(try await other.send(.get, "/v1/sessions/\(session.id)/\(name)"), status: .notFound)
            }
        }
    }
}
