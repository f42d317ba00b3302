import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("task.didSendBodyData: every upload reports its whole body, before its response")
struct UploadProgressTests {
    static let payload = TestOrigin.pattern(count: 300_000, seed: 9)

    private func upload(_ ferry: EngineHarness, to url: String) async throws -> TaskRecord {
        let created = try await ferry.startTask(in: try await ferry.makeSession(), kind: .upload, url: url, method: "PUT", uploadBody: Self.payload)
        return try await ferry.completion(of: created.id)
    }

    private static func integer(_ value: JSONValue?) -> Int {
        if case .number(let number)? = value { return Int(number) }
        return -1
    }

    /// The `bytesSent` and `totalBytesSent` of the task's didSendBodyData events, in order.
    private func progress(_ ferry: EngineHarness, _ task: TaskRecord) async throws -> [(Int, Int)] {
        try await ferry.eventData(of: task.id, type: EventType.taskDidSendBodyData.rawValue).map { data in
            (Self.integer(data["bytesSent"]), Self.integer(data["totalBytesSent"]))
        }
    }

    @Test("a body sent between two heartbeats still has its didSendBodyData, with the total, before didReceiveResponse")
    func smallBody() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body.count)".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run(configure: { $0.heartbeatInterval = .seconds(5) }) { ferry in
            let task = try await upload(ferry, to: origin.url("/in"))
            #expect(task.error == nil)
            let sent = try await progress(ferry, task)
            #expect(sent.last?.1 == Self.payload.count, "\(sent)")
            #expect(sent.map(\.0).reduce(0, +) == Self.payload.count, "\(sent)")
            // Before the response, as in URLSession.
            let types = try await ferry.eventTypes(of: task.id)
            let sentAt = try #require(types.lastIndex(of: EventType.taskDidSendBodyData.rawValue))
            let responseAt = try #require(types.firstIndex(of: EventType.dataTaskDidReceiveResponse.rawValue))
            #expect(sentAt < responseAt, "\(types)")
        }
    }

    @Test("a body sent again after a 307 counts again from 0: no negative step")
    func resentAfterRedirect() async throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/moved": { _, responder in try responder.respond(status: 307, headers: [("Location", "/in")], body: []) },
            "/in": { request, responder in try responder.respond(status: 200, body: Array("\(request.body.count)".utf8)) },
        ]))
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let task = try await upload(ferry, to: origin.url("/moved"))
            #expect(task.error == nil)
            #expect(try await ferry.responseBody(of: task.id) == Array("\(Self.payload.count)".utf8))
            let sent = try await progress(ferry, task)
            #expect(sent.allSatisfy { $0.0 >= 0 && $0.1 >= 0 }, "\(sent)")
            #expect(sent.last?.1 == Self.payload.count, "\(sent)")
        }
    }

    @Test("a slow upload reports its progress as it goes, its totals never going back")
    func slowUpload() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body.count)".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession(SessionConfiguration(kind: .default))
            // Streamed in pieces over about 2.5 s: several seconds' worth of progress.
            var request = TransferRequest(url: origin.url("/in"), httpMethod: "PUT", httpBodyLength: transferSizeUnknown)
            request.timeoutInterval = 30
            var creation = TaskCreation(kind: .upload, request: request)
            creation.uploadBody = .stream
            creation.startsImmediately = true
            let task = try await ferry.tasks.create(tenantID: ferry.tenant.id, sessionID: session.id, creation, request: request, host: "127.0.0.1", origin: .init()).task
            let files = TenantFiles(dataDirectory: ferry.dataDirectory)
            try files.createDirectories(tenantID: ferry.tenant.id)
            let directory = try files.directory(.streams, tenantID: ferry.tenant.id)
            let path = "\(directory)/\(TenantFiles.streamName(taskID: task.id, generation: 1))"
            FileManager.default.createFile(atPath: path, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            for start in stride(from: 0, to: Self.payload.count, by: 30_000) {
                try handle.write(contentsOf: Self.payload[start..<min(start + 30_000, Self.payload.count)])
                try await Task.sleep(for: .milliseconds(250))
            }
            try handle.close()
            try Data("\(Self.payload.count)\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/\(TenantFiles.streamDoneName(taskID: task.id, generation: 1))"))
            let done = try await ferry.completion(of: task.id)
            #expect(done.error == nil)
            let sent = try await progress(ferry, done)
            #expect(sent.count >= 2, "\(sent)")
            #expect(zip(sent, sent.dropFirst()).allSatisfy { $0.1 <= $1.1 }, "\(sent)")
            #expect(sent.last?.1 == Self.payload.count, "\(sent)")
            #expect(sent.map(\.0).reduce(0, +) == Self.payload.count, "\(sent)")
        }
    }
}
