import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// Takes the decision event's delivery for this instance, creating it if the fan-out has not
    /// yet, under a lease that keeps every dispatcher's queue away from it; in the same
    /// transaction, creates the deliveries of its stream's earlier events that the fan-out has not
    /// reached yet and takes those still unsent (`DecisionClaim.earlier`), so that the decision
    /// never waits for the fan-out or for a slot in the queue. Nil when nobody hears the event (no
    /// delegate, a disabled endpoint, not subscribed) or its delivery is already finished or being
    /// attempted elsewhere: the default applies. `answered`: as in `takeEarlier`.
    public func claimDecision(
        eventID: String, taskID: String, lease: Duration, decisionGrace: Duration, answered: [String] = []
    ) async throws -> DecisionClaim? {
        let instanceID = self.instanceID
        let leaseSeconds = lease.secondsValue
        return try await pool.withTransaction { connection -> DecisionClaim? in
            guard let row = try connection.query(
                """
                SELECT e.position, e.tenant_id, e.session_id, e.task_id, e.sequence, e.type, w.id AS endpoint_id, w.events
                FROM events e
                JOIN sessions s ON s.id = e.session_id
                LEFT JOIN tasks t ON t.id = $2 AND t.session_id = e.session_id
                JOIN webhook_endpoints w ON w.id = CASE WHEN e.task_id IS NULL THEN s.delegate_endpoint_id
                                                        ELSE coalesce(t.delegate_endpoint_id, s.delegate_endpoint_id) END
                WHERE e.id = $1 AND (e.task_id IS NULL OR e.task_id = $2) AND w.status = 'active' AND w.tenant_id = e.tenant_id
                """,
                [eventID, taskID]
            ).first else { return nil }
            let filter = WebhookEndpointRows.eventFilter(try row.decode("events", as: [String]?.self))
            guard let type = EventType(rawValue: try row.decode("type")), DelegateEventFilter.subscribes(filter, to: type) else { return nil }
            let endpointID = try row.decode("endpoint_id", as: String.self)
            let taskIDOfEvent = try row.decode("task_id", as: String?.self)
            let sessionID = try row.decode("session_id", as: String.self)
            let sequence = try row.decode("sequence", as: Int64.self)
            try Self.catchUp(
                endpointID: endpointID, streamID: taskIDOfEvent ?? sessionID, isTaskStream: taskIDOfEvent != nil,
                before: sequence, decisionGrace: decisionGrace, on: connection
            )
            // Claimed and loaded in one statement (the row as inserted or re-leased).
            let claimed = try connection.query(
                """
                WITH claimed AS (
                    INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type, session_id,
                                                    task_id, stream_id, sequence, is_decision, next_attempt_at,
                                                    lease_owner, lease_token, lease_expires_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, true, now(), $11, 1, now() + make_interval(secs => $12))
                    ON CONFLICT (event_id, endpoint_id) DO UPDATE SET
                        lease_owner = EXCLUDED.lease_owner, lease_token = webhook_deliveries.lease_token + 1,
                        lease_expires_at = EXCLUDED.lease_expires_at, is_decision = true, updated_at = now()
                    WHERE webhook_deliveries.status = 'pending'
                      AND (webhook_deliveries.lease_expires_at IS NULL OR webhook_deliveries.lease_expires_at < now())
                    RETURNING *
                )
                SELECT \(ClaimedDelivery.columns)
                FROM claimed d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
                """,
                [
                    IDs.make("whd"), try row.decode("tenant_id", as: String.self), endpointID, eventID,
                    try row.decode("position", as: Int64.self), type.rawValue, sessionID, taskIDOfEvent,
                    taskIDOfEvent ?? sessionID, sequence, instanceID, leaseSeconds,
                ]
            )
            guard let decision = try claimed.first.map(ClaimedDelivery.decode) else { return nil }
            return DecisionClaim(decision: decision, earlier: try takeEarlier(than: decision, lease: lease, answered: answered, on: connection))
        }
    }

    /// Records who decided a decision event that was never sent (nobody subscribed): "default".
    public func recordDecision(eventID: String, decidedBy: String) async throws {
        try await pool.withConnection { connection in
            _ = try connection.execute("UPDATE events SET decided_by = $2 WHERE id = $1 AND decided_by IS NULL", [eventID, decidedBy])
        }
    }
}
