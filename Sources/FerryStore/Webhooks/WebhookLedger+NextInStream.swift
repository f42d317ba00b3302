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
    ///
    /// When the stream has nothing more and `orAnotherStream`, takes instead the oldest due head
    /// of another task stream of the same endpoint, with its run: the endpoint's count of streams
    /// in flight stays the same (one ends, one starts), so its limit holds without a claim across
    /// every pending delivery, which costs ten times as much and runs one at a time for every
    /// slot of the instance. `answered`: as in `claimDue`.
    public func claimNext(
        after previous: ClaimedDelivery, limit: Int, lease: Duration, orAnotherStream: Bool = false, answered: [String] = []
    ) async throws -> [ClaimedDelivery] {
        guard previous.event.taskID != nil, limit > 0 else { return [] }
        return try await pool.withTransaction { connection in
            var ids = try takeRun(
                endpointID: previous.endpointID, streamID: previous.streamID, after: previous.event.sequence,
                limit: limit, lease: lease, on: connection
            )
            if ids.isEmpty, orAnotherStream,
               let head = try takeHeadOfAnotherStream(endpointID: previous.endpointID, lease: lease, answered: answered, on: connection) {
                ids = [head.id] + (try takeRun(
                    endpointID: previous.endpointID, streamID: head.streamID, after: head.sequence,
                    limit: limit - 1, lease: lease, on: connection
                ))
            }
            return try ClaimedDelivery.load(ids: ids, on: connection)
        }
    }

    /// Leases up to `limit` consecutive deliveries of a stream after `sequence` that are due and
    /// not leased, stopping at the first that is not; returns their ids.
    private func takeRun(
        endpointID: String, streamID: String, after sequence: Int64, limit: Int, lease: Duration, on connection: PostgresConnection
    ) throws -> [String] {
        guard limit > 0 else { return [] }
        return try connection.query(
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
            [endpointID, streamID, sequence, instanceID, lease.secondsValue, limit]
        ).map { try $0.decode(0, as: String.self) }
    }

    /// Leases the oldest due delivery of the endpoint that heads its task stream (nothing earlier
    /// of its stream unfinished, but what `answered` lists), skipping rows another claim holds.
    private func takeHeadOfAnotherStream(
        endpointID: String, lease: Duration, answered: [String], on connection: PostgresConnection
    ) throws -> (id: String, streamID: String, sequence: Int64)? {
        try connection.query(
            """
            WITH head AS (
                SELECT p.id FROM webhook_deliveries p
                WHERE p.endpoint_id = $1 AND p.status = 'pending' AND p.task_id IS NOT NULL
                  AND p.next_attempt_at <= now() AND (p.lease_expires_at IS NULL OR p.lease_expires_at < now())
                  AND p.id <> ALL($2::text[])
                  AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = p.endpoint_id AND w.status = 'active')
                  AND NOT EXISTS (
                      SELECT 1 FROM webhook_deliveries q
                      WHERE q.endpoint_id = p.endpoint_id AND q.stream_id = p.stream_id AND q.status = 'pending'
                        AND q.sequence < p.sequence AND q.id <> ALL($2::text[]))
                ORDER BY p.next_attempt_at, p.id
                LIMIT 1
                FOR NO KEY UPDATE SKIP LOCKED
            )
            UPDATE webhook_deliveries d SET lease_owner = $3, lease_token = d.lease_token + 1,
                lease_expires_at = now() + make_interval(secs => $4), updated_at = now()
            FROM head WHERE d.id = head.id
            RETURNING d.id, d.stream_id, d.sequence
            """,
            [endpointID, answered, instanceID, lease.secondsValue]
        ).first.map { (try $0.decode(0, as: String.self), try $0.decode(1, as: String.self), try $0.decode(2, as: Int64.self)) }
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
