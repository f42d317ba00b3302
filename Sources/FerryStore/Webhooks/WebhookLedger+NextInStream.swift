import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// Takes the next deliveries of `previous`'s task stream, in order, for the request slot that
    /// sent `previous`, which was answered 2xx (its record may not be written yet): one indexed
    /// statement instead of a claim across every pending delivery, so that a busy stream goes on
    /// at the receiver's pace. Takes up to `limit` consecutive ones that are due and not leased,
    /// stopping at the first that is not. Nobody else can take them meanwhile: `claimDue` takes
    /// only the oldest unfinished delivery of a stream (here `previous`, or one before this run,
    /// until recorded), and these rows are locked before they are checked. Empty for a session's
    /// own stream (those also wait for the session's tasks: the claim's business).
    public func claimNext(after previous: ClaimedDelivery, limit: Int, lease: Duration) async throws -> [ClaimedDelivery] {
        guard previous.event.taskID != nil, limit > 0 else { return [] }
        let instanceID = self.instanceID
        return try await pool.withTransaction { connection in
            let ids = try connection.query(
                """
                WITH following AS (
                    SELECT n.id, n.sequence,
                           n.next_attempt_at <= now() AND (n.lease_expires_at IS NULL OR n.lease_expires_at < now()) AS takeable
                    FROM webhook_deliveries n
                    WHERE n.endpoint_id = $1 AND n.stream_id = $2 AND n.status = 'pending' AND n.sequence > $3
                    ORDER BY n.sequence LIMIT $6
                    FOR NO KEY UPDATE
                ), run AS (
                    SELECT id FROM following
                    WHERE sequence < coalesce((SELECT min(sequence) FROM following WHERE NOT takeable), 9223372036854775807)
                )
                UPDATE webhook_deliveries d SET lease_owner = $4, lease_token = d.lease_token + 1,
                    lease_expires_at = now() + make_interval(secs => $5), updated_at = now()
                FROM run
                WHERE d.id = run.id
                  AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.status = 'active')
                RETURNING d.id
                """,
                [previous.endpointID, previous.streamID, previous.event.sequence, instanceID, lease.secondsValue, limit]
            ).map { try $0.decode(0, as: String.self) }
            return try ClaimedDelivery.load(ids: ids, on: connection)
        }
    }

    /// Gives back leases this instance took but will not use (the rest of a run after a failed
    /// attempt): they would otherwise count against their endpoint until they expire.
    public func releaseLeases(of deliveries: [ClaimedDelivery]) async throws {
        guard !deliveries.isEmpty else { return }
        try await pool.withConnection { connection in
            _ = try connection.execute(
                """
                UPDATE webhook_deliveries d SET lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
                FROM unnest($1::text[], $2::int8[]) AS r(id, token)
                WHERE d.id = r.id AND d.lease_token = r.token AND d.lease_owner = $3 AND d.status = 'pending'
                """,
                [deliveries.map(\.deliveryID), deliveries.map(\.leaseToken), instanceID]
            )
        }
    }
}
