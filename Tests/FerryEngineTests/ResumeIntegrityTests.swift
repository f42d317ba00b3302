import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing
import TestOrigin

/// A resumed download lands byte-exact whatever the origin answers the resume with.
@Suite("Resuming a download: the file is the origin's, byte for byte")
struct ResumeIntegrityTests {
    static let body = TestOrigin.pattern(count: 3_000_000, seed: 11)

    /// How the origin answers `/file` once the download has been suspended.
    enum Answer: Sendable {
        /// A redirect to `/moved`, which serves the same representation (same ETag, ranges).
        case redirect
        /// A 401 challenge first; with the credential, the representation.
        case challenge
    }

    @Test("a resume answered with a redirect, or a challenge, still gives the origin's file", arguments: [Answer.redirect, .challenge])
    func resumeAnsweredOtherwise(_ answer: Answer) async throws {
        let resumed = Atomic<Bool>(false)
        let origin = try TestOrigin { request, responder in
            let path = request.path.split(separator: "?").first.map(String.init) ?? request.path
            guard resumed.load(ordering: .acquiring) else {
                return try responder.serveResource(Self.body, for: request, etag: "\"r1\"", bytesPerSecond: 1_000_000)
            }
            switch (answer, path) {
            case (.redirect, "/file"):
                try responder.redirect(to: "/moved")
            case (.challenge, _) where request.header("Authorization") == nil:
                let page = Array(String(repeating: "<p>401 Unauthorized</p>", count: 80).utf8)
                try responder.respond(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"files\"")], body: page)
            default:
                try responder.serveResource(Self.body, for: request, etag: "\"r1\"")
            }
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            if answer == .challenge {
                try await ferry.storeCredential(in: session, port: origin.port, realm: "files")
            }
            let created = try await ferry.startTask(in: session, kind: .download, url: origin.url("/file"))
            _ = try await ferry.task(created.id) { $0.countOfBytesReceived > 1_000_000 }
            _ = try await ferry.tasks.apply(.suspend, tenantID: ferry.tenant.id, taskID: created.id, resumeData: ferry.resumeData)
            _ = try await ferry.task(created.id) { $0.state == .suspended }
            resumed.store(true, ordering: .releasing)
            _ = try await ferry.tasks.apply(.resume, tenantID: ferry.tenant.id, taskID: created.id, resumeData: ferry.resumeData)
            let task = try await ferry.completion(of: created.id)
            #expect(task.state == .completed)
            #expect(task.error == nil, "\(String(describing: task.error))")
            #expect(try ferry.downloadedFile(of: created.id) == Self.body)
        }
    }
}
