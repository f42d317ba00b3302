import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// Takes, for this instance, the deliveries of decision events that `makeOwnerDeliveries`
    /// did not make claimed: made already (by the fan-out, for an event the API wrote before), or
    /// routed elsewhere (the session's delegate changed in between). Made here if missing, with
    /// those of the task's earlier events the fan-out has not reached for the endpoint it is
    /// routed to now (per-task order). Under a lease that keeps every dispatcher's queue away from
    /// them. Missing from the answer: nobody hears the event (no delegate, a disabled endpoint,
    /// not subscribed), it is not in the log (its task's lease was lost), or its delivery is
    /// finished or being attempted elsewhere.
    static func claimDecisionDeliveries(
        _ asked: [AskedDecision], terms: DecisionClaimTerms, on connection: PostgresConnection
    ) throws -> [ClaimedDelivery] {
        guard !asked.isEmpty else { return [] }
        // One statement: the events heard (by an active delegate that subscribes to them), the
        // catch-up and the claim, loaded as claimed. The two inserts cannot conflict with each
        // other (earlier events, and the decisions themselves); the catch-up inserts in log order,
        // as the fan-out does.
        return try connection.query(
            """
            WITH heard AS MATERIALIZED (
                SELECT e.id, e.position, e.tenant_id, e.session_id, e.task_id, e.sequence, e.type, w.id AS endpoint_id, w.events
                FROM unnest($1::text[], $2::text[]) AS c(event_id, task_id)
                -- Each event looked up by key (OFFSET 0 keeps the planner from joining the other way).
                JOIN LATERAL (SELECT * FROM events e WHERE e.id = c.event_id AND e.task_id = c.task_id OFFSET 0) e ON true
                JOIN tasks t ON t.id = e.task_id AND t.session_id = e.session_id
                JOIN sessions s ON s.id = e.session_id
                JOIN webhook_endpoints w ON w.id = coalesce(t.delegate_endpoint_id, s.delegate_endpoint_id)
                WHERE w.status = 'active' AND w.tenant_id = e.tenant_id
                  AND \(Self.subscribed("w.events", "e.type", optIn: "$3"))
            ), caught_up AS (
                INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type,
                                                session_id, task_id, stream_id, sequence, is_decision, next_attempt_at)
                SELECT \(Self.newDeliveryID), e.tenant_id, h.endpoint_id, e.id, e.position, e.type,
                       e.session_id, e.task_id, e.task_id, e.sequence, e.type = ANY($6::text[]),
                       \(Self.firstAttemptAt(type: "e.type", decisionTypes: "$6", grace: "$7"))
                FROM heard h
                CROSS JOIN LATERAL (\(Self.eventsNotFannedOut(ofTask: "h.task_id"))) e
                WHERE e.tenant_id = h.tenant_id AND e.sequence < h.sequence
                  AND \(Self.subscribed("h.events", "e.type", optIn: "$3"))
                ORDER BY e.position
                ON CONFLICT (event_id, endpoint_id) DO NOTHING
            ), claimed AS (
                INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type, session_id,
                                                task_id, stream_id, sequence, is_decision, next_attempt_at,
                                                lease_owner, lease_token, lease_expires_at)
                SELECT \(Self.newDeliveryID), h.tenant_id, h.endpoint_id, h.id, h.position, h.type,
                       h.session_id, h.task_id, h.task_id, h.sequence, true, now(), $4, 1, now() + make_interval(secs => $5)
                FROM heard h
                ORDER BY h.position
                ON CONFLICT (event_id, endpoint_id) DO UPDATE SET
                    lease_owner = EXCLUDED.lease_owner, lease_token = \(Self.nextLeaseToken(after: "webhook_deliveries.lease_token")),
                    lease_expires_at = EXCLUDED.lease_expires_at, is_decision = true, updated_at = now()
                WHERE webhook_deliveries.status = 'pending'
                  AND (webhook_deliveries.lease_expires_at IS NULL OR webhook_deliveries.lease_expires_at < now())
                RETURNING *
            )
            SELECT \(ClaimedDelivery.columns)
            FROM claimed d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
            """,
            [
                asked.map(\.eventID), asked.map(\.taskID), DelegateEventFilter.optIn.map(\.rawValue),
                terms.instanceID, terms.lease.secondsValue, Self.decisionTypes, terms.decisionGrace.secondsValue,
            ]
        ).map(ClaimedDelivery.decode)
    }

    /// SQL: a new delivery's id.
    static let newDeliveryID = "'whd_' || replace(gen_random_uuid()::text, '-', '')"

    /// SQL: when a new delivery of an event of `type` is first due: at once, but a decision's
    /// only after `grace` seconds, for its owner to send it meanwhile (`decide`); the queue sends
    /// it only when nobody did. `decisionTypes`: a text[] of `decisionTypes`.
    static func firstAttemptAt(type: String, decisionTypes: String, grace: String) -> String {
        "CASE WHEN \(type) = ANY(\(decisionTypes)::text[]) THEN now() + make_interval(secs => \(grace)) ELSE now() END"
    }

    /// SQL for `DelegateEventFilter.subscribes`: an endpoint's `events` column (NULL: every
    /// type but the opt-in ones) subscribes to an event type.
    static func subscribed(_ events: String, _ type: String, optIn: String) -> String {
        "CASE WHEN \(events) IS NULL THEN \(type) <> ALL(\(optIn)::text[]) ELSE \(type) = ANY(\(events)) END"
    }

    /// Records on the event who decided a decision event that no delivery records: "default",
    /// when nobody subscribed, or when what was sent could not be recorded.
    public func recordDecision(eventID: String, decidedBy: String) async throws {
        try await pool.withConnection { connection in
            _ = try connection.execute("UPDATE events SET decided_by = $2 WHERE id = $1 AND decided_by IS NULL", [eventID, decidedBy])
        }
    }
}
