import FerryCore
import FerryStore
import FerryTestSupport
import FerryWebhooks
import Foundation
import Testing
import TestOrigin

@Suite("An owner makes its events' deliveries in the transaction that writes them")
struct OwnerDeliveriesTests {
    @Test("every event the owner writes has its delivery from its commit on, and the task's events arrive in order")
    func deliveriesMadeWithTheirEvents() async throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/data": { request, responder in try responder.serveResource(Array("twenty-two bytes long.".utf8), for: request) },
        ]))
        let receiver = try EngineDecisionTests.Receiver(replies: [:])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: EngineDecisionTests.webhooks) { ferry in
            let session = try await ferry.database.database.sessions.create(
                tenantID: ferry.tenant.id,
                SessionCreation(configuration: SessionConfiguration(kind: .default), delegate: DelegateSpec(url: receiver.url, events: nil))
            ).session
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/data")).id)
            #expect(task.error == nil)
            let deadline = ContinuousClock.now + .seconds(10)
            while receiver.types().last != EventType.taskDidCompleteWithError.rawValue, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            // `now()` is the transaction's start: the same for an event and a delivery made with it.
            let rows = try await ferry.database.database.pool.withConnection { connection in
                try connection.query(
                    """
                    SELECT e.type, d.created_at = e.created_at AS together
                    FROM events e JOIN webhook_deliveries d ON d.event_id = e.id
                    WHERE e.task_id = $1 ORDER BY e.sequence
                    """,
                    [task.id]
                ).map { (try $0.decode(0, as: String.self), try $0.decode(1, as: Bool.self)) }
            }
            let types = rows.map(\.0)
            #expect(types == [
                "task.didCreateTask", "dataTask.didReceiveResponse", "dataTask.willCacheResponse", "task.didFinishCollectingMetrics",
                "task.didCompleteWithError",
            ])
            // didCreateTask is written by the API, whose deliveries the fan-out makes.
            for (type, together) in rows.dropFirst() {
                #expect(together, "the delivery of \(type) was made after its event's transaction")
            }
            // In order of first arrival (a redelivery, which at-least-once allows, is no failure).
            var seen: Set<String> = []
            #expect(receiver.types().filter { seen.insert($0).inserted } == types)
        }
    }
}
