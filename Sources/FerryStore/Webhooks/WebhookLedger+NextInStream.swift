import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// Takes the next delivery of `previous`'s task stream once `previous` is recorded, for the
    /// request slot `previous` leaves: one indexed statement instead of a claim across every
    /// pending delivery, so that a busy stream goes on at the receiver's pace. Its endpoint's
    /// in-flight count does not change (one ends, one starts), and the order holds (only the
    /// oldest unfinished delivery of the stream, after `previous`). Nil when there is none due,
    /// it is taken, the endpoint is disabled, or `previous` is a session's own stream (those
    /// also wait for the session's tasks: the claim's business).
    public func claimNext(after previous: ClaimedDelivery, lease: Duration) async throws -> ClaimedDelivery? {
        guard previous.event.taskID != nil else { return nil }
        let instanceID = self.instanceID
        return try await pool.withTransaction { connection in
            guard let id = try connection.query(
                """
                UPDATE webhook_deliveries d SET lease_owner = $4, lease_token = d.lease_token + 1,
                    lease_expires_at = now() + make_interval(secs => $5), updated_at = now()
                WHERE d.id = (SELECT n.id FROM webhook_deliveries n
                              WHERE n.endpoint_id = $1 AND n.stream_id = $2 AND n.status = 'pending'
                              ORDER BY n.sequence LIMIT 1)
                  AND d.status = 'pending' AND d.sequence > $3 AND d.next_attempt_at <= now()
                  AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())
                  AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.status = 'active')
                RETURNING d.id
                """,
                [previous.endpointID, previous.streamID, previous.event.sequence, instanceID, lease.secondsValue]
            ).first?.decode(0, as: String.self) else { return nil }
            return try connection.query(
                """
                SELECT \(ClaimedDelivery.columns)
                FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
                WHERE d.id = $1
                """,
                [id]
            ).first.map(ClaimedDelivery.decode)
        }
    }
}
