import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Redirects and transport failures map to URLSession's errors")
struct RedirectAndFailureTests {
    @Test("redirects are followed and currentRequest follows them")
    func redirects() async throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/a": { _, responder in try responder.redirect(to: "/b", status: 301) },
            "/b": { _, responder in try responder.redirect(to: "/c", status: 307) },
            "/c": { request, responder in try responder.serveResource(Array("final".utf8), for: request) },
        ]))
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()

            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/a")).id)
            #expect(task.error == nil)
            #expect(task.currentRequest?.url == origin.url("/c"))
            #expect(task.response?.url == origin.url("/c"))
            #expect(try await ferry.responseBody(of: task.id) == Array("final".utf8))
            let events = try await ferry.eventTypes(of: task.id)
            #expect(events.filter { $0 == "task.willPerformHTTPRedirection" }.count == 2)
            let metrics = try await ferry.tasks.metrics(tenantID: ferry.tenant.id, taskID: task.id)
            #expect(metrics?["redirectCount"] == 2)
            // Ferry's own address inside its network is not the tenant's to see; the server's is.
            guard case .array(let transactions)? = metrics?["transactionMetrics"] else {
                Issue.record("no transactionMetrics")
                return
            }
            #expect(transactions.count == 3)
            #expect(transactions.allSatisfy { $0["localAddress"] == nil && $0["localPort"] == nil })
            #expect(transactions.first?["remoteAddress"] == "127.0.0.1")
        }
    }

    @Test("a 17th redirect fails with -1007")
    func tooManyRedirects() async throws {
        let origin = try TestOrigin { request, responder in
            let step = Int(request.query["n"] ?? "0") ?? 0
            try responder.redirect(to: "/loop?n=\(step + 1)")
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()

            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/loop")).id)
            #expect(task.error?.code == -1007)
            #expect(origin.requests.count == 17)
        }
    }

    @Test("a stalled origin times out with -1001 after timeoutIntervalForRequest")
    func stall() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(TestOrigin.pattern(count: 100_000), for: request, stallAfter: (bytes: 1000, seconds: 10))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            var configuration = SessionConfiguration(kind: .default)
            configuration.timeoutIntervalForRequest = 1
            let session = try await ferry.makeSession(configuration)

            let started = ContinuousClock.now
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .download, url: origin.url("/slow")).id)
            #expect(task.error?.code == -1001)
            // Well before the origin's 10 s stall ends (which would complete the task without error).
            #expect(ContinuousClock.now - started < .seconds(9))
        }
    }

    @Test("a connection reset mid-body is -1005, with resume data for a resumable download")
    func reset() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(TestOrigin.pattern(count: 2_000_000), for: request, etag: "\"r1\"", resetAfter: 700_000)
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()

            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .download, url: origin.url("/r")).id)
            #expect(task.error?.code == -1005)
            let resumeData = try #require(task.error?.resumeData)
            let token = try ferry.resumeData.decode(resumeData, tenantID: ferry.tenant.id)
            #expect(token.validator == .strongETag("\"r1\""))
            #expect(token.bytesOnDisk > 0 && token.bytesOnDisk <= 700_000)
        }
    }

    @Test("nothing listening: -1004; a refused address: -1004 saying it was policy, and no packet sent")
    func unreachable() async throws {
        let closed = try TestOrigin { _, _ in }
        let closedURL = closed.url("/x")
        closed.stop()
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let refused = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: closedURL).id)
            #expect(refused.error?.code == -1004)
            #expect(refused.error?.isPolicyRefusal == false)
        }

        let origin = try TestOrigin { _, responder in try responder.respond(status: 200, body: []) }
        defer { origin.stop() }
        try await EngineHarness.run(configure: { $0.addressPolicy = AddressPolicy(allowedNetworks: []) }) { guarded in
            let session = try await guarded.makeSession()
            let task = try await guarded.completion(of: try await guarded.startTask(in: session, kind: .data, url: origin.url("/secret")).id)
            #expect(task.error?.code == -1004)
            // The tenant learns the kind of range, not the address its URL resolved to.
            #expect(task.error?.reason == "refused by policy: the server's address is loopback and not in FERRY_ALLOW_NETWORKS")
            #expect(origin.connectionsAccepted == 0)
        }
    }
}
