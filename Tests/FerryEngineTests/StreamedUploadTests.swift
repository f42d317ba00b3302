import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Uploads from a body the client streams (uploadTask(withStreamedRequest:))")
struct StreamedUploadTests {
    /// Plays the part of `PUT /v1/tasks/{id}/body`: writes body stream `generation` in pieces.
    private func stream(
        _ body: [UInt8], ferry: EngineHarness, taskID: String, generation: Int, piece: Int = 100_000, pause: Duration = .milliseconds(30)
    ) async throws {
        let files = TenantFiles(dataDirectory: ferry.dataDirectory)
        try files.createDirectories(tenantID: ferry.tenant.id)
        let directory = try files.directory(.streams, tenantID: ferry.tenant.id)
        let path = "\(directory)/\(TenantFiles.streamName(taskID: taskID, generation: generation))"
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        for start in stride(from: 0, to: body.count, by: piece) {
            try handle.write(contentsOf: body[start..<min(start + piece, body.count)])
            try await Task.sleep(for: pause)
        }
        try handle.close()
        try Data("\(body.count)\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/\(TenantFiles.streamDoneName(taskID: taskID, generation: generation))"))
    }

    private func start(_ ferry: EngineHarness, session: SessionRecord, url: String, timeoutInterval: Double? = nil) async throws -> TaskRecord {
        let request = TransferRequest(url: url, httpMethod: "PUT", timeoutInterval: timeoutInterval, httpBodyLength: transferSizeUnknown)
        var creation = TaskCreation(kind: .upload, request: request)
        creation.uploadBody = .stream
        creation.startsImmediately = true
        return try await ferry.tasks.create(tenantID: ferry.tenant.id, sessionID: session.id, creation, request: request, host: "127.0.0.1", origin: .init()).task
    }

    @Test("the body is sent as the client streams it, after task.needNewBodyStream")
    func streamed() async throws {
        let payload = TestOrigin.pattern(count: 900_000, seed: 8)
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body == payload) \(request.header("Transfer-Encoding") ?? "-")".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let task = try await start(ferry, session: session, url: origin.url("/in"))
            try await Task.sleep(for: .milliseconds(300))  // the engine claims it and waits for the body
            try await stream(payload, ferry: ferry, taskID: task.id, generation: 1)
            let done = try await ferry.completion(of: task.id)
            #expect(done.error == nil)
            #expect(try await ferry.responseBody(of: task.id) == Array("true chunked".utf8))
            #expect(done.countOfBytesSent == Int64(payload.count))
            #expect(try await ferry.eventTypes(of: task.id).contains("task.needNewBodyStream"))
        }
    }

    @Test("a 307 asks for the body again, and the new stream goes to the new location")
    func redirected() async throws {
        let payload = TestOrigin.pattern(count: 200_000, seed: 9)
        let origin = try TestOrigin(TestOrigin.routes([
            "/first": { _, responder in try responder.redirect(to: "/second", status: 307) },
            "/second": { request, responder in try responder.respond(status: 201, body: Array("\(request.body == payload)".utf8)) },
        ]))
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let task = try await start(ferry, session: session, url: origin.url("/first"))
            try await stream(payload, ferry: ferry, taskID: task.id, generation: 1)
            // Wait for the second request for the body, then send it.
            let generations = ferry.database.database.pool
            for _ in 0..<100 {
                let generation = try await generations.withConnection { connection in
                    try connection.query("SELECT body_stream_generation FROM tasks WHERE id = $1", [task.id])[0].decode(0, as: Int.self)
                }
                if generation == 2 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await stream(payload, ferry: ferry, taskID: task.id, generation: 2)
            let done = try await ferry.completion(of: task.id)
            #expect(done.error == nil)
            #expect(done.response?.statusCode == 201)
            #expect(try await ferry.responseBody(of: task.id) == Array("true".utf8))
            #expect(try await ferry.eventTypes(of: task.id).filter { $0 == "task.needNewBodyStream" }.count == 2)
        }
    }

    @Test("a Digest challenge asks for the body again, and the new stream is sent with the answer", .timeLimit(.minutes(1)))
    func digestChallenge() async throws {
        let payload = TestOrigin.pattern(count: 200_000, seed: 12)
        let origin = try TestOrigin(TestOrigin.routes([
            "/vault": { request, responder in
                guard try responder.requireDigestAuth(user: "ada", password: "lovelace", realm: "vault") else { return }
                try responder.respond(status: 201, body: Array("\(request.body == payload)".utf8))
            },
        ]))
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            try await ferry.storeCredential(in: session, port: origin.port)
            let task = try await start(ferry, session: session, url: origin.url("/vault"), timeoutInterval: 20)
            try await stream(payload, ferry: ferry, taskID: task.id, generation: 1)
            // The answer to the challenge needs the body again: stream 2, once asked for.
            for _ in 0..<100 where try await ferry.eventTypes(of: task.id).filter({ $0 == "task.needNewBodyStream" }).count < 2 {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await stream(payload, ferry: ferry, taskID: task.id, generation: 2)
            let done = try await ferry.completion(of: task.id, timeout: .seconds(30))
            #expect(done.error == nil, "\(origin.requests(path: "/vault").map { "\($0.method) \($0.body.count) \($0.header("Authorization") ?? "-")" })")
            #expect(done.response?.statusCode == 201)
            #expect(try await ferry.responseBody(of: task.id) == Array("true".utf8))
        }
    }

    @Test("after a suspend and a resume, the task asks for a new stream, and sends that one")
    func resumedAsksForANewStream() async throws {
        let first = TestOrigin.pattern(count: 200_000, seed: 10)
        let second = TestOrigin.pattern(count: 200_000, seed: 11)
        // The first request is held until the task is suspended (its connection is then cut).
        let origin = try TestOrigin.holdingBody(first, answeringWhetherBodyIs: second)
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let task = try await start(ferry, session: session, url: origin.url("/in"))
            try await stream(first, ferry: ferry, taskID: task.id, generation: 1)
            for _ in 0..<100 where origin.requests(path: "/in").isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            _ = try await ferry.tasks.apply(.suspend, tenantID: ferry.tenant.id, taskID: task.id, resumeData: ferry.resumeData)
            _ = try await ferry.task(task.id) { $0.state == .suspended }
            _ = try await ferry.tasks.apply(.resume, tenantID: ferry.tenant.id, taskID: task.id, resumeData: ferry.resumeData)
            var generations: [JSONValue?] = []
            for _ in 0..<200 where generations.count < 2 {
                try await Task.sleep(for: .milliseconds(50))
                generations = try await ferry.eventData(of: task.id, type: "task.needNewBodyStream").map { $0["generation"] }
            }
            #expect(generations == [1, 2])
            try await stream(second, ferry: ferry, taskID: task.id, generation: 2)
            let done = try await ferry.completion(of: task.id)
            #expect(done.error == nil)
            #expect(try await ferry.responseBody(of: task.id) == Array("true".utf8))
        }
    }

    @Test("task.didSendBodyData as a slow body goes out: several events, totals never going back, steps summing to the body")
    func progressAsItGoes() async throws {
        let payload = TestOrigin.pattern(count: 300_000, seed: 12)
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body == payload)".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let task = try await start(ferry, session: session, url: origin.url("/in"), timeoutInterval: 30)
            try await stream(payload, ferry: ferry, taskID: task.id, generation: 1, piece: 30_000, pause: .milliseconds(250))
            let done = try await ferry.completion(of: task.id)
            #expect(done.error == nil)
            let sent = try await ferry.eventData(of: task.id, type: EventType.taskDidSendBodyData.rawValue).map { data -> (Double, Double) in
                guard case .number(let step)? = data["bytesSent"], case .number(let total)? = data["totalBytesSent"] else { return (-1, -1) }
                return (step, total)
            }
            #expect(sent.count >= 2, "\(sent)")
            #expect(zip(sent, sent.dropFirst()).allSatisfy { $0.1 <= $1.1 }, "\(sent)")
            #expect(sent.last?.1 == Double(payload.count), "\(sent)")
            #expect(sent.map(\.0).reduce(0, +) == Double(payload.count), "\(sent)")
        }
    }

    @Test("a body that never comes, or stops coming, ends the task with -1001 after timeoutIntervalForRequest")
    func bodyThatNeverComesTimesOut() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body.count)".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let never = try await start(ferry, session: session, url: origin.url("/never"), timeoutInterval: 1)
            let stalled = try await start(ferry, session: session, url: origin.url("/stalled"), timeoutInterval: 1)
            // Half a body, then nothing: no more bytes, no done marker.
            let files = TenantFiles(dataDirectory: ferry.dataDirectory)
            try files.createDirectories(tenantID: ferry.tenant.id)
            let directory = try files.directory(.streams, tenantID: ferry.tenant.id)
            let path = "\(directory)/\(TenantFiles.streamName(taskID: stalled.id, generation: 1))"
            FileManager.default.createFile(atPath: path, contents: Data(TestOrigin.pattern(count: 50_000, seed: 3)))
            let started = ContinuousClock.now

            let neverDone = try await ferry.completion(of: never.id, timeout: .seconds(15))
            let stalledDone = try await ferry.completion(of: stalled.id, timeout: .seconds(15))

            for done in [neverDone, stalledDone] {
                #expect(done.state == .completed, "\(done.id) never came and must time out")
                #expect(done.error?.code == URLErrorCode.timedOut.rawValue, "\(String(describing: done.error))")
            }
            #expect(ContinuousClock.now - started < .seconds(10), "timed out after about a second, not later")
        }
    }

    @Test("waiting for bodies that do not come wakes the workers about once a second, not every few milliseconds")
    func waitingCostsNothing() async throws {
        let payload = TestOrigin.pattern(count: 100_000, seed: 4)
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body == payload)".utf8))
        }
        defer { origin.stop() }
        // Heartbeats wake the workers too: one a second, as in production.
        try await EngineHarness.run(configure: { $0.heartbeatInterval = .seconds(1) }) { ferry in
            let session = try await ferry.makeSession()
            var waiting: [TaskRecord] = []
            for index in 0..<4 {
                waiting.append(try await start(ferry, session: session, url: origin.url("/wait/\(index)"), timeoutInterval: 60))
            }
            _ = try await ferry.task(waiting[3].id) { $0.state == .running }
            try await Task.sleep(for: .milliseconds(500))  // the workers take the tasks and ask for bodies
            let before = ferry.engine.workerWakeups

            try await Task.sleep(for: .seconds(3))
            let wakeups = ferry.engine.workerWakeups - before
            // Then a body arrives, and the wait ends at once: woken by its arrival.
            let arrived = ContinuousClock.now
            try await stream(payload, ferry: ferry, taskID: waiting[0].id, generation: 1)
            let done = try await ferry.completion(of: waiting[0].id)

            // Two workers, 3 s: about 3 timeouts and 3 heartbeats each; polling every 20 ms is 150 each.
            #expect(wakeups < 40, "\(wakeups) wake-ups in 3 s")
            #expect(done.error == nil)
            #expect(try await ferry.responseBody(of: waiting[0].id) == Array("true".utf8))
            #expect(ContinuousClock.now - arrived < .seconds(3), "the body's arrival woke the transfer")
        }
    }
}
