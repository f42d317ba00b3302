import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Uploads from blobs")
struct BlobUploadTests {
    @Test("an upload task sends a blob's file, counting its bytes")
    func blobUpload() async throws {
        let payload = TestOrigin.pattern(count: 2_500_000, seed: 5)
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body == payload)".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let files = TenantFiles(dataDirectory: ferry.dataDirectory)
            try files.createDirectories(tenantID: ferry.tenant.id)
            let blobID = "blb_testblob"
            try Data(payload).write(to: URL(fileURLWithPath: try files.path(.blobs, tenantID: ferry.tenant.id, name: blobID)))
            _ = try await ferry.database.database.blobs.create(id: blobID, tenantID: ferry.tenant.id, size: Int64(payload.count), sha256: "00")

            var creation = TaskCreation(kind: .upload, request: TransferRequest(url: origin.url("/in"), httpMethod: "PUT"))
            creation.uploadBody = .blob(blobID)
            creation.startsImmediately = true
            let created = try await ferry.tasks.create(
                tenantID: ferry.tenant.id, sessionID: session.id, creation, request: creation.request!, host: "127.0.0.1", origin: .init()
            ).task
            #expect(created.countOfBytesExpectedToSend == Int64(payload.count))
            let task = try await ferry.completion(of: created.id)
            #expect(task.error == nil)
            #expect(task.countOfBytesSent == Int64(payload.count))
            #expect(try await ferry.responseBody(of: task.id) == Array("true".utf8))
        }
    }
}
