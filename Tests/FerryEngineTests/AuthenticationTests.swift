import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Challenges answered from the session's credential storage")
struct AuthenticationTests {
    private func origin() throws -> TestOrigin {
        try TestOrigin(TestOrigin.routes([
            "/basic": { request, responder in
                guard try responder.requireBasicAuth(user: "ada", password: "lovelace", realm: "files") else { return }
                try responder.respond(status: 200, body: Array("basic ok".utf8))
            },
            "/digest": { request, responder in
                guard try responder.requireDigestAuth(user: "ada", password: "lovelace", realm: "vault") else { return }
                try responder.respond(status: 200, body: Array("digest ok \(request.body.count)".utf8))
            },
        ]))
    }

    @Test("Basic and Digest (with a body sent again) succeed with a stored credential")
    func answered() async throws {
        let origin = try origin()
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            try await ferry.storeCredential(in: session, port: origin.port)

            let basic = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/basic")).id)
            #expect(basic.response?.statusCode == 200)
            #expect(try await ferry.responseBody(of: basic.id) == Array("basic ok".utf8))

            let payload = TestOrigin.pattern(count: 50_000)
            let digest = try await ferry.completion(of: try await ferry.startTask(
                in: session, kind: .upload, url: origin.url("/digest"), method: "POST", uploadBody: payload
            ).id)
            #expect(digest.response?.statusCode == 200, "\(origin.requests(path: "/digest").map { "\($0.method) \($0.body.count) \($0.header("Authorization") ?? "-")" })")
            #expect(try await ferry.responseBody(of: digest.id) == Array("digest ok 50000".utf8))
        }
    }

    @Test("without a credential, or with a wrong one, the 401 is the response")
    func unanswered() async throws {
        let origin = try origin()
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let bare = try await ferry.makeSession()
            let none = try await ferry.completion(of: try await ferry.startTask(in: bare, kind: .data, url: origin.url("/basic")).id)
            #expect(none.error == nil)
            #expect(none.response?.statusCode == 401)

            let wrong = try await ferry.makeSession()
            try await ferry.storeCredential(in: wrong, port: origin.port, realm: "files", password: "babbage")
            let task = try await ferry.completion(of: try await ferry.startTask(in: wrong, kind: .data, url: origin.url("/basic")).id)
            #expect(task.response?.statusCode == 401)
            #expect(origin.requests(path: "/basic").count == 3, "one unauthenticated try each, then one with the wrong credential")
        }
    }
}
