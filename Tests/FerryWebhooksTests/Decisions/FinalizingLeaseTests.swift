import FerryCore
import FerryEngine
import FerryStore
import FerryTestSupport
import FerryWebhooks
import Foundation
import Testing
import TestOrigin

@Suite("A transfer's lease is renewed while its end is finalised")
struct FinalizingLeaseTests {
    /// Leases shorter than the receiver's answer.
    static func shortLease(_ configuration: inout EngineConfiguration) {
        configuration.leaseDuration = .seconds(2)
        configuration.decisionTimeout = .seconds(6)
    }

    private static func cacheableOrigin() throws -> TestOrigin {
        try TestOrigin { request, responder in
            try responder.serveResource(Array("cacheable".utf8), for: request, extraHeaders: [("Cache-Control", "max-age=600")])
        }
    }

    /// Answers `dataTask.willCacheResponse` (asked after the transfer, as its end is finalised)
    /// after `seconds`, the rest at once.
    private static func receiver(answeringWillCacheResponseAfter seconds: Double) throws -> TestOrigin {
        try TestOrigin { request, responder in
            let type = (try? JSONValue.parse(request.body))?["type"]?.stringValue
            if type == EventType.dataTaskWillCacheResponse.rawValue { responder.pause(seconds: seconds) }
            try responder.respond(status: 200, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
        }
    }

    /// A session whose delegate, `receiver`, hears only willCacheResponse.
    private static func session(of ferry: EngineHarness, hearing receiver: TestOrigin) async throws -> SessionRecord {
        try await ferry.database.database.sessions.create(
            tenantID: ferry.tenant.id,
            SessionCreation(
                configuration: SessionConfiguration(kind: .default),
                delegate: DelegateSpec(url: receiver.url("/hook"), events: [.dataTaskWillCacheResponse])
            )
        ).session
    }

    @Test("a willCacheResponse answered after the lease's length: another instance does not take the task over")
    func slowWillCacheResponse() async throws {
        let origin = try Self.cacheableOrigin()
        let receiver = try Self.receiver(answeringWillCacheResponseAfter: 3)
        defer { origin.stop(); receiver.stop() }
        let database = try await TestDatabase.make(poolSize: 6)
        let owner = try await EngineHarness(database: database, instanceID: "owner", webhooks: EngineDecisionTests.webhooks, configure: Self.shortLease)
        let session = try await Self.session(of: owner, hearing: receiver)
        let created = try await owner.startTask(in: session, kind: .data, url: origin.url("/r"))
        // The transfer is over and its end is being finalised (the receiver holds the decision).
        let deadline = ContinuousClock.now + .seconds(10)
        while receiver.requests(path: "/hook").isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        // Another instance, whose reaper takes over leases that lapsed.
        let other = try await EngineHarness(database: database, instanceID: "other", tenant: owner.tenant, configure: Self.shortLease)
        let task = try await owner.completion(of: created.id)
        await other.stop()
        await owner.stop()
        await database.close()
        try? FileManager.default.removeItem(atPath: owner.dataDirectory)
        try? FileManager.default.removeItem(atPath: other.dataDirectory)
        // Lapsed, the lease let the other instance end the task with -1005.
        #expect(task.error == nil, "\(String(describing: task.error))")
        #expect(origin.requests(path: "/r").count == 1)
    }

    @Test("a cancel while willCacheResponse is asked (the transfer is over, its end not written) ends the task -999")
    func cancelWhileFinalising() async throws {
        let origin = try Self.cacheableOrigin()
        let receiver = try Self.receiver(answeringWillCacheResponseAfter: 2)
        defer { origin.stop(); receiver.stop() }
        try await EngineHarness.run(webhooks: EngineDecisionTests.webhooks) { ferry in
            let session = try await Self.session(of: ferry, hearing: receiver)
            let created = try await ferry.startTask(in: session, kind: .data, url: origin.url("/r"))
            let deadline = ContinuousClock.now + .seconds(10)
            while receiver.requests(path: "/hook").isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            _ = try await ferry.tasks.apply(.cancel, tenantID: ferry.tenant.id, taskID: created.id, resumeData: ferry.resumeData)
            let task = try await ferry.completion(of: created.id)
            #expect(task.error?.code == URLErrorCode.cancelled.rawValue)
        }
    }
}
