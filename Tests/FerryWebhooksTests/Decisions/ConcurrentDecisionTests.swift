import FerryCore
import FerryStore
import FerryTestSupport
import FerryWebhooks
import Foundation
import Testing
import TestOrigin

/// Many transfers paused on decisions at once, against one endpoint: a decision must never wait
/// for an in-flight slot that other waiting decisions hold (issue 15: 32 tasks stalled for 19 s
/// and most decisions took the default while the receiver sat idle).
@Suite("Concurrent decisions are all the receiver's")
struct ConcurrentDecisionTests {
    static let taskCount = 64

    @Test("64 data tasks whose delegate answers every decision at once are all decided by the receiver, promptly")
    func manyDecisionsDoNotStall() async throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/small": { request, responder in try responder.serveResource(Array("twenty-two bytes long.".utf8), for: request) },
        ]))
        // Every event type (the default subscription); decisions answered "allow" at once.
        let receiver = try EngineDecisionTests.Receiver(replies: ["dataTask.didReceiveResponse": #"{"disposition": "allow"}"#])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: EngineDecisionTests.webhooks) { ferry in
            var configuration = SessionConfiguration(kind: .default)
            configuration.httpMaximumConnectionsPerHost = 16
            let session = try await ferry.database.database.sessions.create(
                tenantID: ferry.tenant.id,
                SessionCreation(configuration: configuration, delegate: DelegateSpec(url: receiver.url, events: nil))
            ).session
            let started = ContinuousClock.now
            var taskIDs: [String] = []
            for _ in 0..<Self.taskCount {
                taskIDs.append(try await ferry.startTask(in: session, kind: .data, url: origin.url("/small")).id)
            }
            for id in taskIDs {
                let task = try await ferry.completion(of: id, timeout: .seconds(30))
                #expect(task.state == .completed && task.error == nil)
            }
            let elapsed = ContinuousClock.now - started
            // A decision's record follows its reply by a few milliseconds.
            var deciders: [(String, Int)] = []
            for _ in 0..<50 {
                deciders = try await ferry.database.database.pool.withConnection { connection in
                    try connection.query(
                        "SELECT coalesce(\(EventRecord.decidedBySQL), 'none'), count(*) FROM events e WHERE e.session_id = $1 AND e.type = $2 GROUP BY 1",
                        [session.id, EventType.dataTaskDidReceiveResponse.rawValue]
                    ).map { (try $0.decode(0, as: String.self), try $0.decode(1, as: Int.self)) }
                }
                if !deciders.contains(where: { $0.0 == "none" }) { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(deciders.count == 1 && deciders.first?.0 == "receiver" && deciders.first?.1 == Self.taskCount, "\(deciders)")
            // Without a delegate these take well under a second; the stall took 20 s for 32.
            #expect(elapsed < .seconds(8), "\(elapsed)")
        }
    }
}
