import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Each session's URL cache, with URLSession's cache policies")
struct URLCacheTests {
    private func origin() throws -> TestOrigin {
        try TestOrigin(TestOrigin.routes([
            "/fresh": { request, responder in
                try responder.serveResource(Array("fresh body".utf8), for: request, extraHeaders: [("Cache-Control", "max-age=600")])
            },
            "/large": { request, responder in
                try responder.serveResource(Self.largeBody, for: request, extraHeaders: [("Cache-Control", "max-age=600")])
            },
            "/validated": { request, responder in
                try responder.serveResource(Array("validated body".utf8), for: request, etag: "\"v1\"", extraHeaders: [("Cache-Control", "no-cache")])
            },
        ]))
    }

    private func run(_ ferry: EngineHarness, _ session: SessionRecord, _ url: String, kind: TaskKind = .data, policy: RequestCachePolicy? = nil) async throws -> TaskRecord {
        var request = TransferRequest(url: url)
        request.cachePolicy = policy
        var creation = TaskCreation(kind: kind, request: request)
        creation.startsImmediately = true
        let task = try await ferry.tasks.create(tenantID: ferry.tenant.id, sessionID: session.id, creation, request: request, host: "127.0.0.1", origin: .init()).task
        return try await ferry.completion(of: task.id)
    }

    @Test("a fresh response is answered from the cache, reported as a local cache load", arguments: [SessionKind.default, .ephemeral])
    func fresh(kind: SessionKind) async throws {
        let origin = try origin()
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession(SessionConfiguration(kind: kind))
            let first = try await run(ferry, session, origin.url("/fresh"))
            try await Task.sleep(for: .milliseconds(200))
            let second = try await run(ferry, session, origin.url("/fresh"))
            #expect(second.error == nil)
            #expect(second.response?.statusCode == 200)
            #expect(try await ferry.responseBody(of: second.id) == Array("fresh body".utf8))
            #expect(origin.requests(path: "/fresh").count == 1)
            let metrics = try await ferry.tasks.metrics(tenantID: ferry.tenant.id, taskID: second.id)
            guard case .array(let transactions)? = metrics?["transactionMetrics"] else { Issue.record("no metrics"); return }
            #expect(transactions.first?["resourceFetchType"] == "localCache")
            _ = first
            // reloadIgnoringLocalCacheData goes to the network anyway.
            _ = try await run(ferry, session, origin.url("/fresh"), policy: .reloadIgnoringLocalCacheData)
            #expect(origin.requests(path: "/fresh").count == 2)
        }
    }

    /// Larger than what the cache keeps in an entry's row.
    private static let largeBody = (0..<8192).map { UInt8($0 % 251) }

    @Test("a small body is kept in its entry and a large one in a file of the cache folder; both are answered from the cache")
    func bodiesInlineAndInFiles() async throws {
        let origin = try origin()
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            _ = try await run(ferry, session, origin.url("/fresh"))
            _ = try await run(ferry, session, origin.url("/large"))
            try await Task.sleep(for: .milliseconds(200))
            let folder = try TenantFiles(dataDirectory: ferry.dataDirectory).directory(.cache, tenantID: ferry.tenant.id)
            let files = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(files.count == 1, "the cache folder holds \(files)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + (files.first ?? ""))) == Data(Self.largeBody))
            let small = try await run(ferry, session, origin.url("/fresh"))
            let large = try await run(ferry, session, origin.url("/large"))
            #expect(try await ferry.responseBody(of: small.id) == Array("fresh body".utf8))
            #expect(try await ferry.responseBody(of: large.id) == Self.largeBody)
            #expect(origin.requests(path: "/fresh").count == 1)
            #expect(origin.requests(path: "/large").count == 1)
        }
    }

    @Test("a no-cache response is revalidated with If-None-Match and a 304 answers from the cache")
    func revalidated() async throws {
        let origin = try origin()
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            _ = try await run(ferry, session, origin.url("/validated"), kind: .download)
            try await Task.sleep(for: .milliseconds(200))
            let second = try await run(ferry, session, origin.url("/validated"), kind: .download)
            #expect(second.error == nil)
            #expect(second.response?.statusCode == 200)
            #expect(try ferry.downloadedFile(of: second.id) == Array("validated body".utf8))
            let requests = origin.requests(path: "/validated")
            #expect(requests.count == 2)
            #expect(requests.last?.header("If-None-Match") == "\"v1\"")
        }
    }

    @Test("returnCacheDataDontLoad with nothing cached fails with -1009 at once and never touches the network", arguments: [
        SessionKind.default, .background,
    ])
    func dontLoad(kind: SessionKind) async throws {
        let origin = try origin()
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            var configuration = SessionConfiguration(kind: kind)
            if kind == .background { configuration.identifier = "cache-only" }
            let session = try await ferry.makeSession(configuration)
            let started = ContinuousClock.now
            let task = try await run(ferry, session, origin.url("/fresh"), policy: .returnCacheDataDontLoad)
            #expect(task.error?.code == -1009)
            // Not retried as a network failure (a background session's first retry waits seconds).
            #expect(ContinuousClock.now - started < .seconds(1.5), "took \(ContinuousClock.now - started)")
            #expect(origin.requests.isEmpty)
        }
    }
}
