import Foundation
import Testing

/// URLSessionTask's commands on a running download, over HTTP as a tenant sends them.
@Suite("suspend, resume and cancelByProducingResumeData on a running download")
struct TaskCommandTests {
    static let mebibyte = 1024 * 1024
    /// Commands accept no body (as the README's curl sends them) or `{}`.
    static let emptyObject = Data("{}".utf8)

    @Test("a suspended download continues from its partial file with Range when resumed", .timeLimit(.minutes(1)))
    func suspendAndResume() async throws {
        let origin = try RecordingOrigin(size: 8 * Self.mebibyte, bytesPerSecond: 2 * Self.mebibyte)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let ferry = try await testbed.start("commands")
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "default"]).session
            let task = try await client.createDownload(in: session.id, url: origin.url)
            try await RestartTests.waitForProgress(of: task.id, client: client, atLeast: Self.mebibyte, instance: ferry)

            let suspended = try await client.command("suspend", task: task.id)
            #expect(suspended.state == "suspended")
            let stopped = try await eventually(timeout: .seconds(5)) { origin.openConnections == 0 ? true : nil }
            #expect(stopped == true, "the transfer kept its connection after suspend")
            origin.setRate(bytesPerSecond: nil)

            #expect(try await client.command("resume", task: task.id, body: Self.emptyObject).state == "running")
            let done = try await client.completion(of: task.id, timeout: .seconds(30))
            #expect(done.state == "completed")
            #expect(done.error == nil, "\(String(describing: done.error))")
            #expect(try await client.file(of: task.id) == Data(origin.body))
            let ranges = origin.arrivals.map(\.rangeStart)
            #expect(ranges.count == 2, "requests' Range starts: \(ranges)")
            #expect((ranges.last.flatMap { $0 } ?? 0) > 0, "the resumed transfer started over: \(ranges)")
        }
    }

    @Test("cancelByProducingResumeData gives resume data that a new task finishes byte-exact", .timeLimit(.minutes(1)))
    func cancelByProducingResumeData() async throws {
        let origin = try RecordingOrigin(size: 8 * Self.mebibyte, bytesPerSecond: 2 * Self.mebibyte)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let ferry = try await testbed.start("resumedata")
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "default"]).session
            let task = try await client.createDownload(in: session.id, url: origin.url)
            try await RestartTests.waitForProgress(of: task.id, client: client, atLeast: Self.mebibyte, instance: ferry)

            let answer = try await client.send("POST", "/v1/tasks/\(task.id)/cancelByProducingResumeData")
            #expect(answer.status == 200, "\(answer.status) \(answer.text)")
            let token = try #require(
                (try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any])?["resumeData"] as? String,
                "no resumeData in \(answer.text)"
            )
            let cancelled = try await client.task(task.id)
            #expect(cancelled.state == "completed")
            #expect(cancelled.error?.code == -999)
            origin.setRate(bytesPerSecond: nil)

            let resumed = try await client.createDownload(in: session.id, resumeData: token)
            let done = try await client.completion(of: resumed.id, timeout: .seconds(30))
            #expect(done.error == nil, "\(String(describing: done.error))")
            #expect(try await client.file(of: resumed.id) == Data(origin.body))
            #expect((origin.arrivals.last?.rangeStart ?? 0) > 0, "the resumed task started over")

            // Resume data is good for one task: its partial file now belongs to that task.
            let again = try await client.send("POST", "/v1/sessions/\(session.id)/tasks", json: FerryClient.json(["kind": "download", "resumeData": token]))
            #expect(again.status == 409, "reusing resume data answered \(again.status) \(again.text)")
        }
    }

    @Test("an Idempotency-Key makes a retried creation return the same task", .timeLimit(.minutes(1)))
    func idempotentCreation() async throws {
        let origin = try RecordingOrigin(size: 1000)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let ferry = try await testbed.start("idempotent")
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "default"]).session
            let body = try FerryClient.json(["kind": "download", "request": ["url": origin.url], "resume": true])
            let first = try await client.send("POST", "/v1/sessions/\(session.id)/tasks", json: body, headers: ["Idempotency-Key": "retry-1"])
            let second = try await client.send("POST", "/v1/sessions/\(session.id)/tasks", json: body, headers: ["Idempotency-Key": "retry-1"])
            #expect(first.status == 201)
            #expect(second.status == 200)
            let ids = try [first, second].map { try $0.decode(TaskAnswer.self, expecting: [200, 201], "creation").id }
            #expect(ids[0] == ids[1])
            #expect(try await client.tasks(inSession: session.id).count == 1)
            // The file range a client may ask for.
            let done = try await client.completion(of: ids[0], timeout: .seconds(20))
            #expect(done.error == nil)
            let part = try await client.send("GET", "/v1/tasks/\(ids[0])/file", headers: ["Range": "bytes=100-199"])
            #expect(part.status == 206)
            #expect(part.body == Data(origin.body[100...199]))
        }
    }
}
