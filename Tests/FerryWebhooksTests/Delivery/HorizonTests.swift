import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

@Suite("The event horizon: no reader skips an event that commits late")
struct HorizonTests {
    @Test("an event whose transaction is still open holds the horizon below it, and the fan-out with it")
    func openTransactionHoldsTheHorizon() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let slow = try await ferry.makeTask(in: session)
            let quick = try await ferry.makeTask(in: session)
            #expect(try await receiver.wait { $0.sequences(ofTask: slow.id) == [1] && $0.sequences(ofTask: quick.id) == [1] })
            // A writer takes position p1 and stays open; another commits p2 > p1 meanwhile.
            let open = try PostgresConnection.connect(ferry.test.conninfo)
            defer { open.close() }
            try open.execute("BEGIN")
            let ref = EventWriter.TaskRef(tenantID: slow.tenantID, sessionID: slow.sessionID, taskID: slow.id)
            var batch = EventBatch()
            let slowEvent = batch.append(.downloadTaskDidWriteData, for: ref, data: [:])
            try batch.flush(on: open)
            let p1 = try open.query("SELECT position FROM events WHERE id = $1", [slowEvent])[0].decode(0, as: Int64.self)
            let quickEvent = try await ferry.emit(.downloadTaskDidWriteData, task: quick)
            let p2 = try await ferry.value("SELECT position FROM events WHERE id = $1", [quickEvent], as: Int64.self)
            #expect(p2 > p1)

            let held = try await EventHorizon.current(pool: ferry.pool, patience: .milliseconds(200))
            #expect(held < p1)
            #expect(held > 0, "falls back to how far the dispatcher has read")
            let listed = try await ferry.database.events.sessionEvents(tenantID: ferry.tenant.id, sessionID: session.id, after: nil, limit: 100)
            #expect(listed.items.allSatisfy { $0.position < p1 })

            try await Task.sleep(for: .milliseconds(400))
            #expect(receiver.sequences(ofTask: quick.id) == [1], "the fan-out must not pass the open event")
            #expect(try await ferry.database.webhookLedger(instanceID: "x").dispatchPosition() < p1)

            try open.execute("COMMIT")
            #expect(try await receiver.wait { $0.sequences(ofTask: quick.id) == [1, 2] && $0.sequences(ofTask: slow.id) == [1, 2] })
            let after = try await EventHorizon.current(pool: ferry.pool)
            #expect(after >= p2)
        }
    }
}
