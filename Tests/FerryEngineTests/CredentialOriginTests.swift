import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

/// Credentials stay with their origin (scheme, host, port) across redirects, as in URLSession:
/// a redirect to another origin must not carry an answered challenge's credential, the
/// session's Authorization or Cookie, or the request's own (issue 17).
@Suite("Credentials and redirects to other origins")
struct CredentialOriginTests {
    /// Records what arrives; `/landing` answers 200.
    private func elsewhere() throws -> TestOrigin {
        try TestOrigin { request, responder in try responder.respond(status: 200, body: Array("landed \(request.path)".utf8)) }
    }

    private func home(redirectingTo other: TestOrigin) throws -> TestOrigin {
        let landing = other.url("/landing")
        return try TestOrigin(TestOrigin.routes([
            "/private": { _, responder in
                guard try responder.requireBasicAuth(user: "ada", password: "lovelace") else { return }
                try responder.redirect(to: landing)
            },
            "/private-same": { _, responder in
                guard try responder.requireBasicAuth(user: "ada", password: "lovelace") else { return }
                try responder.redirect(to: "/private-next")
            },
            "/private-next": { _, responder in
                guard try responder.requireBasicAuth(user: "ada", password: "lovelace") else { return }
                try responder.respond(status: 200, body: Array("same ok".utf8))
            },
            "/hop": { _, responder in try responder.redirect(to: landing) },
            "/hop-same": { _, responder in try responder.redirect(to: "/landing") },
            "/landing": { _, responder in try responder.respond(status: 200, body: Array("home".utf8)) },
        ]))
    }

    @Test("an answered challenge's credential is not sent to the origin a redirect leads to; on the same origin it is")
    func challengeCredential() async throws {
        let other = try elsewhere()
        let home = try home(redirectingTo: other)
        defer { home.stop(); other.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            try await ferry.storeCredential(in: session, port: home.port)
            let crossing = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: home.url("/private")).id)
            #expect(crossing.response?.statusCode == 200)
            #expect(crossing.response?.url == other.url("/landing"))
            let landed = try #require(other.requests(path: "/landing").first)
            #expect(landed.header("Authorization") == nil)

            let staying = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: home.url("/private-same")).id)
            #expect(staying.response?.statusCode == 200)
            #expect(try await ferry.responseBody(of: staying.id) == Array("same ok".utf8))
        }
    }

    @Test("the session's Authorization and Cookie, and the request's, stay behind on another origin; other fields follow")
    func headers() async throws {
        let other = try elsewhere()
        let home = try home(redirectingTo: other)
        defer { home.stop(); other.stop() }
        try await EngineHarness.run { ferry in
            var configuration = SessionConfiguration(kind: .default)
            configuration.httpAdditionalHeaders = ["Authorization": "Bearer session-secret", "Cookie": "sid=session", "X-Session": "kept"]
            let session = try await ferry.makeSession(configuration)

            let crossing = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: home.url("/hop")).id)
            #expect(crossing.response?.statusCode == 200)
            let first = try #require(home.requests(path: "/hop").first)
            #expect(first.header("Authorization") == "Bearer session-secret")
            #expect(first.header("Cookie") == "sid=session")
            let landed = try #require(other.requests(path: "/landing").first)
            #expect(landed.header("Authorization") == nil)
            #expect(landed.header("Cookie") == nil)
            #expect(landed.header("X-Session") == "kept")

            let own = try await ferry.completion(of: try await ferry.startTask(
                in: session, kind: .data, url: home.url("/hop"), headers: ["Authorization": "Bearer task-secret", "Cookie": "c=1"]
            ).id)
            #expect(own.response?.statusCode == 200)
            let ownLanded = try #require(other.requests(path: "/landing").last)
            #expect(other.requests(path: "/landing").count == 2)
            #expect(ownLanded.header("Authorization") == nil)
            #expect(ownLanded.header("Cookie") == nil)

            let staying = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: home.url("/hop-same")).id)
            #expect(staying.response?.statusCode == 200)
            let sameLanded = try #require(home.requests(path: "/landing").first)
            #expect(sameLanded.header("Authorization") == "Bearer session-secret")
            #expect(sameLanded.header("Cookie") == "sid=session")
        }
    }

    @Test("a download resumed at a checkpoint on another origin (where redirects led) takes no credentials there")
    func resumedElsewhere() async throws {
        let content = TestOrigin.pattern(count: 100_000)
        let serve: TestOrigin.Handler = { request, responder in try responder.serveResource(content, for: request, etag: "\"v1\"") }
        let home = try TestOrigin(serve)
        let other = try TestOrigin(serve)
        defer { home.stop(); other.stop() }
        try await EngineHarness.run { ferry in
            var configuration = SessionConfiguration(kind: .default)
            configuration.httpAdditionalHeaders = ["Authorization": "Bearer session-secret", "X-Session": "kept"]
            let session = try await ferry.makeSession(configuration)
            let files = TenantFiles(dataDirectory: ferry.dataDirectory)
            try files.createDirectories(tenantID: ferry.tenant.id)
            let name = "resumed-elsewhere.part"
            try Data(content.prefix(40_000)).write(to: URL(fileURLWithPath: try files.path(.partial, tenantID: ferry.tenant.id, name: name)))
            let checkpoint = TransferCheckpoint(
                partialFile: name, bytesOnDisk: 40_000, validator: .strongETag("\"v1\""), url: other.url("/file"), expectedTotalBytes: 100_000
            )
            let task = try await ferry.completion(of: try await ferry.startTask(
                in: session, kind: .download, url: home.url("/file"),
                headers: ["Authorization": "Bearer task-secret", "Cookie": "c=1"], checkpoint: checkpoint
            ).id)
            #expect(task.error == nil)
            #expect(try ferry.downloadedFile(of: task.id) == content)
            let resumed = try #require(other.requests.first)
            #expect(resumed.header("Range") == "bytes=40000-")
            #expect(resumed.header("Authorization") == nil)
            #expect(resumed.header("Cookie") == nil)
            #expect(resumed.header("X-Session") == "kept")
            #expect(home.requests.isEmpty)
        }
    }
}
