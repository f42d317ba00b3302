import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Uploads from a body the client streams (uploadTask(withStreamedRequest:))")
struct StreamedUploadTests {
    /// Plays the part of `PUT /v1/tasks/{id}/body`: writes body stream `generation` in pieces.
    private func stream(_ body: [UInt8], ferry: EngineHarness, taskID: String, generation: Int) async throws {
        let files = TenantFiles(dataDirectory: ferry.dataDirectory)
        try files.createDirectories(tenantID: ferry.tenant.id)
        let directory = try files.directory(.streams, tenantID: ferry.tenant.id)
        let path = "\(directory)/\(TenantFiles.streamName(taskID: taskID, generation: generation))"
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        for start in stride(from: 0, to: body.count, by: 100_000) {
            try handle.write(contentsOf: body[start..<min(start + 100_000, body.count)])
            try await Task.sleep(for: .milliseconds(30))
        }
        try handle.close()
        try Data("\(body.count)\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/\(TenantFiles.streamDoneName(taskID: taskID, generation: generation))"))
    }

    private func start(_ ferry: EngineHarness, session: SessionRecord, url: String) async throws -> TaskRecord {
        let request = TransferRequest(url: url, httpMethod: "PUT", httpBodyLength: transferSizeUnknown)
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
}
