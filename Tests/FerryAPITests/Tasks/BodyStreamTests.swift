import FerryCore
import FerryTestSupport
import HTTPTypes
import Testing
import TestOrigin

@Suite("PUT /v1/tasks/{id}/body: a streamed upload's body", .sharedHarnesses)
struct BodyStreamTests {
    private func streamTask(_ tenant: FerryClient, in sessionID: String) async throws -> TaskReply {
        try await tenant.createTask(in: sessionID, [
            "kind": "upload", "request": ["url": "http://127.0.0.1:9/in", "httpMethod": "PUT"], "body": ["stream": true],
        ])
    }

    @Test("a body is taken once per stream; a tenant at its storage quota streams no more, as it stores no blob")
    func quota() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let patched = try await api.operatorClient.send(.patch, "/admin/v1/tenants/\(tenant.tenantID)", json: ["quotas": ["maxStoredBytes": 1000]])
            #expect(patched.status == .ok)
            let session = try await tenant.createSession()
            let first = try await streamTask(tenant, in: session.id)
            let second = try await streamTask(tenant, in: session.id)
            #expect(try await tenant.send(.put, "/v1/tasks/\(first.id)/body", raw: Array(repeating: 7, count: 100)).status == .ok)
            expectProblem(try await tenant.send(.put, "/v1/tasks/\(first.id)/body", raw: [1]), status: .conflict)

            // A blob takes the tenant past its quota.
            #expect(try await tenant.send(.put, "/v1/blobs", raw: Array(repeating: 1, count: 2000)).status == .created)
            expectProblem(try await tenant.send(.put, "/v1/tasks/\(second.id)/body", raw: Array(repeating: 7, count: 100)), status: .forbidden)
            expectProblem(try await tenant.send(.put, "/v1/blobs", raw: [1]), status: .forbidden)
        }
    }

    @Test("a body longer than the tenant's maxTaskBytes is refused with 413 before it is stored: the same stream takes a body that fits")
    func tooLargeLeavesTheStreamOpen() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let patched = try await api.operatorClient.send(.patch, "/admin/v1/tenants/\(tenant.tenantID)", json: ["quotas": ["maxTaskBytes": 1000]])
            #expect(patched.status == .ok)
            let session = try await tenant.createSession()
            let task = try await streamTask(tenant, in: session.id)
            expectProblem(try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: Array(repeating: 7, count: 2000)), status: .contentTooLarge)
            #expect(try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: Array(repeating: 7, count: 1000)).status == .ok)
        }
    }

    @Test("a body PUT right after a resume goes to the stream the resumed task asks for", .timeLimit(.minutes(1)))
    func bodyRightAfterResume() async throws {
        let first = TestOrigin.pattern(count: 50_000, seed: 20)
        let second = TestOrigin.pattern(count: 50_000, seed: 21)
        // The first request is held until the task is suspended (its connection is then cut).
        let origin = try TestOrigin.holdingBody(first, answeringWhetherBodyIs: second)
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, ferry in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, [
                "kind": "upload", "request": ["url": .string(origin.url("/in")), "httpMethod": "PUT"], "body": ["stream": true],
                "resume": true,
            ])
            let sent = try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: first)
            #expect(sent.status == .ok)
            #expect(try sent.decode(BodyStreamReply.self).generation == 1)
            try await waitUntil(timeout: .seconds(10)) { !origin.requests(path: "/in").isEmpty }
            _ = try await tenant.command(.suspend, task.id)
            // Handed back by its transfer: nothing runs it until it is resumed.
            try await waitUntil(timeout: .seconds(10)) {
                try await api.database.pool.withConnection { connection in
                    try connection.query("SELECT lease_owner IS NULL FROM tasks WHERE id = $1", [task.id]).firstRow().decode(0, as: Bool.self)
                }
            }

            // The client sends the new body at once, before the task's task.needNewBodyStream
            // for it is written (that took a claim, a worker and a commit): it was refused with
            // 409, as a second copy of stream 1.
            _ = try await tenant.command(.resume, task.id)
            let resent = try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: second)
            #expect(resent.status == .ok, "\(resent)")
            #expect((try? resent.decode(BodyStreamReply.self).generation) == 2)

            let done = try await tenant.task(task.id, wait: 20)
            #expect(done.state == "completed")
            #expect(done.error == nil)
            #expect(try await tenant.data(task.id) == Array("true".utf8))
            let asked = try await ferry.eventData(of: task.id, type: "task.needNewBodyStream").map { $0["generation"] }
            #expect(asked == [1, 2])
        }
    }

    @Test("a task suspended and resumed while its owner still holds it takes its next body for the next stream", .timeLimit(.minutes(1)))
    func resumedBeforeItsOwnerLetGo() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await streamTask(tenant, in: session.id)
            // As a transfer that asked for stream 1 and is still running leaves it.
            try await api.database.pool.withConnection { connection in
                try connection.execute(
                    """
                    UPDATE tasks SET state = 'running', body_stream_generation = 1, lease_owner = 'another-instance',
                                     lease_expires_at = now() + interval '1 minute'
                    WHERE id = $1
                    """,
                    [task.id]
                )
            }
            // Suspended and resumed before that owner hands it back: the owner was told to stop,
            // so the task's next transfer (a new claim) asks for stream 2. The body went to
            // stream 1, which nobody would read again.
            _ = try await tenant.command(.suspend, task.id)
            _ = try await tenant.command(.resume, task.id)
            let sent = try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: [1, 2, 3])
            #expect(sent.status == .ok, "\(sent)")
            #expect((try? sent.decode(BodyStreamReply.self).generation) == 2)
            let stop = try await api.database.pool.withConnection { connection in
                try connection.query("SELECT stop_reason FROM tasks WHERE id = $1", [task.id]).firstRow().decode(0, as: String?.self)
            }
            #expect(stop == "suspend")
        }
    }

    @Test("a suspended task that ran takes its next body for the next stream, once; the 409 names the one after", .timeLimit(.minutes(1)))
    func suspendedTaskTakesTheNextStream() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await streamTask(tenant, in: session.id)
            // As a transfer that asked for stream 1 and was suspended leaves it.
            try await api.database.pool.withConnection { connection in
                try connection.execute("UPDATE tasks SET body_stream_generation = 1 WHERE id = $1", [task.id])
            }
            let sent = try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: [1, 2, 3])
            #expect(sent.status == .ok, "\(sent)")
            #expect((try? sent.decode(BodyStreamReply.self).generation) == 2)
            let problem = expectProblem(try await tenant.send(.put, "/v1/tasks/\(task.id)/body", raw: [1]), status: .conflict)
            #expect(problem?.detail.contains("Body stream 2") == true, "\(String(describing: problem))")
            #expect(problem?.detail.contains("generation 3") == true, "\(String(describing: problem))")
        }
    }
}

private struct BodyStreamReply: Decodable {
    var generation: Int
    var size: Int64
}
