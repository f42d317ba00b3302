import FerryCore
import Testing
import TestOrigin

@Suite("resume, suspend and cancel give URLSession's results in every state", .sharedHarnesses)
struct TaskCommandTests {
    enum Start: String, Sendable, CaseIterable {
        case suspended, running, completed
    }

    /// What URLSession does: commands that do not apply are ignored, never errors.
    static func expectedState(after command: TaskCommand, from start: Start) -> String {
        switch (start, command) {
        case (.completed, _), (_, .cancel): "completed"
        case (_, .resume): "running"
        case (_, .suspend): "suspended"
        }
    }

    @Test("the command's answer", arguments: Start.allCases, TaskCommand.allCases)
    func command(_ start: Start, _ command: TaskCommand) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            // Nothing transfers without an engine, so a running task stays queued (not yet owned).
            let task = try await tenant.createTask(
                in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"], "resume": .bool(start == .running)]
            )
            if start == .completed { _ = try await tenant.command(.cancel, task.id) }

            let answer = try await tenant.command(command, task.id)

            #expect(answer.state == Self.expectedState(after: command, from: start))
            #expect(try await tenant.task(task.id).state == answer.state)
            if answer.state == "completed" {
                #expect(answer.error?.code == -999)
                #expect(answer.error?.domain == "NSURLErrorDomain")
            } else {
                #expect(answer.error == nil)
            }
        }
    }

    @Test("cancelByProducingResumeData applies to downloads only: 409 for data and upload tasks", arguments: ["data", "upload"])
    func resumeDataOnlyForDownloads(_ kind: String) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            var body: JSONValue = ["kind": .string(kind), "request": ["url": "http://example.com/a"]]
            if kind == "upload" { body = body.setting("body", to: ["text": "hello"]) }
            let task = try await tenant.createTask(in: session.id, body)

            let reply = try await tenant.send(.post, "/v1/tasks/\(task.id)/cancelByProducingResumeData", json: [:])

            expectProblem(reply, status: .conflict)
            #expect(try await tenant.task(task.id).state == "suspended")
        }
    }

    @Test("cancelByProducingResumeData of a download that never started: completed, resumeData null")
    func resumeDataOfAnUnstartedDownload() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"]])

            #expect(try await tenant.cancelByProducingResumeData(task.id) == nil)
            let cancelled = try await tenant.task(task.id)
            #expect(cancelled.state == "completed")
            #expect(cancelled.error?.code == -999)
            #expect(try await tenant.cancelByProducingResumeData(task.id) == nil, "again on a completed task: nothing to produce")
        }
    }

    @Test("cancel and suspend stop a real transfer")
    func stopsARealTransfer() async throws {
        let body = TestOrigin.pattern(count: 400_000)
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(body, for: request, etag: "\"c1\"", bytesPerSecond: 100_000)
        }
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let request: JSONValue = ["kind": "download", "request": ["url": .string(origin.url("/slow"))], "resume": true]
            let cancelled = try await tenant.createTask(in: session.id, request)
            let suspended = try await tenant.createTask(in: session.id, request)
            try await Task.sleep(for: .milliseconds(800))

            let cancelling = try await tenant.command(.cancel, cancelled.id)
            let suspending = try await tenant.command(.suspend, suspended.id)

            #expect(["canceling", "completed"].contains(cancelling.state))
            #expect(suspending.state == "suspended")
            let done = try await tenant.task(cancelled.id, wait: 10)
            #expect(done.state == "completed")
            #expect(done.error?.code == -999)
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await tenant.task(suspended.id).state == "suspended", "a suspended task stays suspended")
        }
    }
}
