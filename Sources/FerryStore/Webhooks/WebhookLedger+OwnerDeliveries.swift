import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// What an owner's transaction that wrote events does for the webhooks (with `terms`: this
    /// instance sends them): makes the deliveries of the events of `delegates`' tasks, then
    /// claims for this instance those of the decision events in `asking`.
    ///
    /// `delegates`: each task written in this transaction with its delegate endpoint (the task's
    /// own or its session's).
    public static func writeDeliveries(
        for delegates: [(taskID: String, endpointID: String)], asking: [AskedDecision], terms: DecisionClaimTerms,
        on connection: PostgresConnection
    ) throws -> DeliveriesWritten {
        var written = DeliveriesWritten()
        written.endpointIDs = try makeOwnerDeliveries(delegates, decisionGrace: terms.decisionGrace, on: connection)
        // After the deliveries are made: a decision's claim counts on its earlier events' being there.
        if !asking.isEmpty { written.claims = try claimDecisions(asking, terms: terms, on: connection) }
        return written
    }

    /// Makes, in the owner's transaction that writes a task's events, the deliveries of those
    /// events and of the task's earlier events the fan-out has not reached yet, with the
    /// fan-out's rules (an active delegate endpoint of the task's tenant that subscribes to the
    /// type; a decision's delivery left to its owner for `decisionGrace`). Returns the
    /// endpoints that have new deliveries.
    ///
    /// The fan-out makes a delivery only once its event is under the safe horizon, after the
    /// writer's commit, a notification, a coalescing wait and a wait for every other open
    /// transaction: a median 30 ms of webhooks.sh's steady 55-65 ms from an event to its
    /// arrival. Made here, a delivery exists when its event does, and the fan-out, which reads
    /// only committed events, finds it made (ON CONFLICT DO NOTHING, without waiting for a lock).
    ///
    /// Per-task order: a stream's deliveries are made in log order, the earlier events' first,
    /// so a claim never finds a later delivery of a task without the earlier ones. Only the
    /// catch-up of earlier events can meet the fan-out's inserts; both insert in log order, so
    /// neither waits for a row the other inserted while holding one the other waits for.
    static func makeOwnerDeliveries(
        _ delegates: [(taskID: String, endpointID: String)], decisionGrace: Duration, on connection: PostgresConnection
    ) throws -> Set<String> {
        guard !delegates.isEmpty else { return [] }
        let rows = try connection.query(
            """
            WITH routed AS (
                SELECT e.id, e.position, e.tenant_id, e.session_id, e.task_id, e.sequence, e.type, w.id AS endpoint_id
                FROM unnest($1::text[], $2::text[]) AS r(task_id, endpoint_id)
                JOIN webhook_endpoints w ON w.id = r.endpoint_id
                -- Each task's events by its index (OFFSET 0: a look-up, never a join of every event).
                CROSS JOIN LATERAL (
                    SELECT * FROM events e
                    WHERE e.task_id = r.task_id AND e.position > (SELECT position FROM webhook_dispatch WHERE id = 1)
                    OFFSET 0
                ) e
                WHERE w.status = 'active' AND w.tenant_id = e.tenant_id
                  AND \(Self.subscribed("w.events", "e.type", optIn: "$3"))
            ), inserted AS (
                INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type,
                                                session_id, task_id, stream_id, sequence, is_decision, next_attempt_at)
                SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), r.tenant_id, r.endpoint_id, r.id, r.position,
                       r.type, r.session_id, r.task_id, r.task_id, r.sequence, r.type = ANY($4::text[]),
                       CASE WHEN r.type = ANY($4::text[]) THEN now() + make_interval(secs => $5) ELSE now() END
                FROM routed r
                ORDER BY r.position
                ON CONFLICT (event_id, endpoint_id) DO NOTHING
                RETURNING endpoint_id
            )
            SELECT DISTINCT endpoint_id FROM inserted
            """,
            [
                delegates.map(\.taskID), delegates.map(\.endpointID), DelegateEventFilter.optIn.map(\.rawValue),
                Self.decisionTypes, decisionGrace.secondsValue,
            ]
        )
        return Set(try rows.map { try $0.decode(0, as: String.self) })
    }
}

/// What an owner's transaction did for the webhooks (`TransferLedger.record`, `finish`).
public struct DeliveriesWritten: Sendable {
    /// The claimed decisions, by event id (see `WebhookLedger.claimDecisions`).
    public var claims: [String: DecisionClaim] = [:]
    /// The endpoints with deliveries made by the transaction, for a claim to take them.
    public var endpointIDs: Set<String> = []
}
