import FerryCore
import Foundation
import Postgres

/// A decision's delivery taken by this instance, with what must be sent before it.
public struct DecisionClaim: Sendable {
    public var decision: ClaimedDelivery
    public var earlier: EarlierDeliveries
}

/// The unfinished deliveries of a decision's stream that come before it (per-task order).
public enum EarlierDeliveries: Sendable {
    /// None: the decision may be sent now.
    case none
    /// Taken by this instance under a lease, in stream order: send them, then the decision.
    case taken([ClaimedDelivery])
    /// At least one is being attempted (by a queue, here or on another instance): wait for it.
    case inFlight
}

extension WebhookLedger {
    /// Creates the deliveries of a decision's earlier stream events that the fan-out has not
    /// reached yet (those events are committed: the owner wrote them before the decision), with
    /// the fan-out's own rules: the same endpoint, its subscription, decision events left to
    /// the grace period. The fan-out finds them made (`ON CONFLICT DO NOTHING` on both sides).
    /// Called before the decision's own delivery is inserted: both sides insert in log order, so
    /// neither waits for a row the other inserted while holding one the other waits for.
    static func catchUp(
        endpointID: String, streamID: String, isTaskStream: Bool, before sequence: Int64, decisionGrace: Duration,
        on connection: PostgresConnection
    ) throws {
        // Two statements rather than one with an OR, so each uses its index.
        let streamEvents = isTaskStream
            ? "e.task_id = $2 AND e.sequence < $3"
            : "e.session_id = $2 AND e.task_id IS NULL AND e.sequence < $3"
        try connection.execute(
            """
            INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type,
                                            session_id, task_id, stream_id, sequence, is_decision, next_attempt_at)
            SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), e.tenant_id, w.id, e.id, e.position, e.type,
                   e.session_id, e.task_id, $2, e.sequence, e.type = ANY($4::text[]),
                   CASE WHEN e.type = ANY($4::text[]) THEN now() + make_interval(secs => $5) ELSE now() END
            FROM events e JOIN webhook_endpoints w ON w.id = $1 AND w.tenant_id = e.tenant_id
            WHERE \(streamEvents)
              AND e.position > (SELECT position FROM webhook_dispatch WHERE id = 1)
              AND CASE WHEN w.events IS NULL THEN e.type <> ALL($6::text[]) ELSE e.type = ANY(w.events) END
            ORDER BY e.position
            ON CONFLICT (event_id, endpoint_id) DO NOTHING
            """,
            [
                endpointID, streamID, sequence, Self.decisionTypes,
                decisionGrace.secondsValue, DelegateEventFilter.optIn.map(\.rawValue),
            ]
        )
    }

    /// Takes the decision's earlier unfinished deliveries, unless one of them is being attempted
    /// elsewhere. Every one is locked first (not skipped), so a queue claiming one at this moment
    /// is either seen holding it or finds it taken. The lock is NO KEY UPDATE: a full one would
    /// wait for (and deadlock with) an attempt being recorded, whose row references the delivery.
    /// `answered` (as in `claimDue`): this instance's deliveries answered 2xx and not yet
    /// recorded, which are through: a decision does not wait for their record.
    public func takeEarlier(than decision: ClaimedDelivery, lease: Duration, answered: [String]) async throws -> EarlierDeliveries {
        try await pool.withTransaction { connection in
            try takeEarlier(than: decision, lease: lease, answered: answered, on: connection)
        }
    }

    func takeEarlier(
        than decision: ClaimedDelivery, lease: Duration, answered: [String], on connection: PostgresConnection
    ) throws -> EarlierDeliveries {
        let earlier = try connection.query(
            """
            SELECT id, coalesce(lease_expires_at >= now(), false) AS leased FROM webhook_deliveries
            WHERE endpoint_id = $1 AND stream_id = $2 AND status = 'pending' AND sequence < $3 AND id <> ALL($4::text[])
            ORDER BY sequence
            FOR NO KEY UPDATE
            """,
            [decision.endpointID, decision.streamID, decision.event.sequence, answered]
        )
        guard !earlier.isEmpty else { return .none }
        if try earlier.contains(where: { try $0.decode("leased", as: Bool.self) }) { return .inFlight }
        let ids = try earlier.map { try $0.decode("id", as: String.self) }
        // Leased and loaded in one statement, in stream order.
        return .taken(try connection.query(
            """
            WITH taken AS (
                UPDATE webhook_deliveries SET lease_owner = $2, lease_token = lease_token + 1,
                    lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
                WHERE id = ANY($1)
                RETURNING *
            )
            SELECT \(ClaimedDelivery.columns)
            FROM taken d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
            ORDER BY e.position
            """,
            [ids, instanceID, lease.secondsValue]
        ).map(ClaimedDelivery.decode))
    }
}
