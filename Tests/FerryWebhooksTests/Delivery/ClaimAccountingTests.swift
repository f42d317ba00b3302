import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// What a claim counts against an endpoint's `maximumInFlight`, on the ledger itself (no
/// service runs): streams sending, not leases held; and not what this instance saw answered.
@Suite("Claims count requests in flight, not leases")
struct ClaimAccountingTests {
    @Test("a stream's run counts once, and an answered delivery not yet recorded lets its stream go on")
    func runsAndAnsweredDeliveries() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let session = try await ferry.database.sessions.create(
                tenantID: ferry.tenant.id,
                SessionCreation(
                    configuration: SessionConfiguration(kind: .default),
                    delegate: DelegateSpec(url: "http://127.0.0.1:9/hooks", secret: WebhookHarness.newSecret(), maximumInFlight: 2)
                )
            ).session
            // A: didCreateTask and three progress events; B, fanned out later (so due later):
            // didCreateTask and one.
            let ledger = ferry.database.webhookLedger(instanceID: "claims-test")
            let a = try await ferry.makeTask(in: session)
            for _ in 0..<3 { try await ferry.emit(.downloadTaskDidWriteData, task: a) }
            try await fanOutEverything(ledger)
            let b = try await ferry.makeTask(in: session)
            try await ferry.emit(.downloadTaskDidWriteData, task: b)
            try await fanOutEverything(ledger)
            func claim(room: Int, answered: [ClaimedDelivery] = []) async throws -> [ClaimedDelivery] {
                let limits = WebhookLedger.ClaimLimits(total: room, perEndpoint: 64, perTenant: 64, lease: .seconds(30))
                return try await ledger.claimDue(limits, answered: answered.map(\.deliveryID)).claimed
            }
            func names(_ claimed: [ClaimedDelivery]) -> [String] {
                claimed.map { "\($0.event.taskID == a.id ? "a" : "b")\($0.event.sequence)" }
            }

            let first = try await claim(room: 1)
            #expect(names(first) == ["a1"])
            let run = try await ledger.claimNext(after: try #require(first.first), limit: 16, lease: .seconds(30))
            #expect(names(run) == ["a2", "a3", "a4"])
            // Four leases, one stream: the endpoint's second request may go to B.
            let second = try await claim(room: 10)
            #expect(names(second) == ["b1"])
            // A and B each have a request out: the endpoint's two.
            #expect(try await claim(room: 10).isEmpty)
            // b1 was answered (this instance knows; its record is not written): B's next event may
            // go now, and B's stream holds no request meanwhile.
            #expect(names(try await claim(room: 10, answered: second)) == ["b2"])
        }
    }

    /// Moves the fan-out past every committed event.
    private func fanOutEverything(_ ledger: WebhookLedger) async throws {
        var horizon = EventHorizon()
        repeat {
            horizon = try await ledger.advance(horizon)
        } while horizon.isWaiting
        _ = try await ledger.fanOut(upTo: horizon.safePosition, limit: 500, decisionGrace: .seconds(30))
    }
}
