import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

/// Claims commit asynchronously, so a crash of PostgreSQL may forget the last of them while the
/// instance that made it is still sending under the lease (`WebhookLedger.nextLeaseToken`).
@Suite("A lease PostgreSQL forgot is never issued again")
struct ForgottenLeaseTests {
    @Test("the claim after a forgotten one has another token, and the old lease's record is fenced off")
    func forgottenClaim() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let session = try await ferry.makeSession(delegateURL: "http://127.0.0.1:9/hooks").session
            let ledger = ferry.database.webhookLedger(instanceID: "lease-test")
            let task = try await ferry.makeTask(in: session)
            try await ledger.fanOutEverything()
            let limits = WebhookLedger.ClaimLimits(total: 1, perEndpoint: 64, perTenant: 64, lease: .seconds(30))

            let forgotten = try #require(try await ledger.claimDue(limits).claimed.first)
            #expect(forgotten.event.taskID == task.id)
            // What a crash of the server does to a claim it had not flushed: the row as before it.
            _ = try await ferry.pool.withConnection { connection in
                try connection.execute(
                    "UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL, lease_token = 0 WHERE id = $1",
                    [forgotten.deliveryID]
                )
            }
            let again = try #require(try await ledger.claimDue(limits).claimed.first)
            #expect(again.deliveryID == forgotten.deliveryID)
            #expect(again.leaseToken > forgotten.leaseToken)

            // The slot that still holds the forgotten lease is answered; its record must not
            // finish the delivery under the new lease.
            let stale = DeliveredAttempt(
                deliveryID: forgotten.deliveryID, sessionID: session.id, leaseToken: forgotten.leaseToken, startedAt: Date(),
                duration: .milliseconds(3), statusCode: 200, error: nil, responseExcerpt: nil, decidedBy: "receiver"
            )
            let stillHeld = try await ledger.recordDelivered([stale])
            #expect(stillHeld.isEmpty)
            let status = try await ferry.value("SELECT status FROM webhook_deliveries WHERE id = $1", [forgotten.deliveryID], as: String.self)
            #expect(status == "pending")
            // Had it been a decision, its transfer went on with that reply: who decided is kept.
            let decidedBy = try await ferry.value("SELECT decided_by FROM webhook_deliveries WHERE id = $1", [forgotten.deliveryID], as: String?.self)
            #expect(decidedBy == "receiver")

            // The current lease's answer delivers it. The delivering attempt lives on the
            // delivery's row, the fenced one in webhook_attempts; the tenant sees both, in order.
            let current = DeliveredAttempt(
                deliveryID: again.deliveryID, sessionID: session.id, leaseToken: again.leaseToken, startedAt: Date(),
                duration: .milliseconds(4), statusCode: 202, error: nil, responseExcerpt: "thanks"
            )
            #expect(try await ledger.recordDelivered([current]) == [again.deliveryID])
            let delivered = try await ferry.database.webhooks.delivery(tenantID: ferry.tenant.id, id: again.deliveryID)
            #expect(delivered.status == .delivered)
            #expect(delivered.attempts.map(\.statusCode) == [200, 202])
            #expect(delivered.attempts.map(\.responseExcerpt) == [nil, "thanks"])
            #expect(delivered.attempts.map(\.durationMilliseconds) == [3, 4])
        }
    }
}
