import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// `claimDecisions` for one decision event already in the log, in a transaction of its own.
    public func claimDecision(
        eventID: String, taskID: String, lease: Duration, decisionGrace: Duration, answered: [String] = []
    ) async throws -> DecisionClaim? {
        let terms = DecisionClaimTerms(instanceID: instanceID, lease: lease, decisionGrace: decisionGrace, answered: answered)
        return try await pool.withTransaction { connection in
            try IndexedPlans.apply(on: connection)
            return try Self.claimDecisions([AskedDecision(eventID: eventID, taskID: taskID)], terms: terms, on: connection)[eventID]
        }
    }

    /// Takes the deliveries of these decision events for this instance, creating them if the
    /// fan-out has not yet, under a lease that keeps every dispatcher's queue away from them; in
    /// the same transaction, creates the deliveries of their streams' earlier events that the
    /// fan-out has not reached yet and takes those still unsent (`DecisionClaim.earlier`), so
    /// that a decision never waits for the fan-out or for a slot in the queue. The owner calls
    /// this in the transaction that writes the events, which saves a transaction per decision
    /// and the time between the two.
    ///
    /// Answers by event id. Missing: nobody hears the event (no delegate, a disabled endpoint,
    /// not subscribed), it is not in the log (its task's lease was lost), or its delivery is
    /// finished or being attempted elsewhere; such an event is recorded as decided by "default".
    public static func claimDecisions(
        _ asked: [AskedDecision], terms: DecisionClaimTerms, on connection: PostgresConnection
    ) throws -> [String: DecisionClaim] {
        guard !asked.isEmpty else { return [:] }
        let heard = try heardDecisions(asked, on: connection)
        try catchUp(before: heard, decisionGrace: terms.decisionGrace, on: connection)
        // Claimed and loaded in one statement (the rows as inserted or re-leased).
        let decisions = try connection.query(
            """
            WITH claimed AS (
                INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type, session_id,
                                                task_id, stream_id, sequence, is_decision, next_attempt_at,
                                                lease_owner, lease_token, lease_expires_at)
                SELECT c.id, c.tenant_id, c.endpoint_id, c.event_id, c.position, c.type, c.session_id,
                       c.task_id, c.task_id, c.sequence, true, now(), $10, 1, now() + make_interval(secs => $11)
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::text[], $7::text[], $8::text[], $9::int8[])
                     AS c(id, tenant_id, endpoint_id, event_id, position, type, session_id, task_id, sequence)
                ORDER BY c.position
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
                heard.map { _ in IDs.make("whd") }, heard.map(\.tenantID), heard.map(\.endpointID), heard.map(\.eventID),
                heard.map(\.position), heard.map(\.type.rawValue), heard.map(\.sessionID), heard.map(\.taskID), heard.map(\.sequence),
                terms.instanceID, terms.lease.secondsValue,
            ]
        ).map(ClaimedDelivery.decode)
        let earlier = try takeEarlier(than: decisions, instanceID: terms.instanceID, lease: terms.lease, answered: terms.answered, on: connection)
        var claims: [String: DecisionClaim] = [:]
        for decision in decisions {
            claims[decision.event.id] = DecisionClaim(decision: decision, earlier: earlier[decision.deliveryID] ?? .none)
        }
        let unclaimed = asked.map(\.eventID).filter { claims[$0] == nil }
        if !unclaimed.isEmpty {
            try connection.execute("UPDATE events SET decided_by = 'default' WHERE id = ANY($1) AND decided_by IS NULL", [unclaimed])
        }
        return claims
    }

    /// A decision event with the delegate endpoint that hears it.
    struct HeardDecision {
        var eventID: String
        var tenantID: String
        var endpointID: String
        var position: Int64
        var type: EventType
        var sessionID: String
        var taskID: String
        var sequence: Int64
    }

    /// The asked events that are in the log and whose task's (or session's) delegate is active
    /// and subscribes to them, in log order.
    private static func heardDecisions(_ asked: [AskedDecision], on connection: PostgresConnection) throws -> [HeardDecision] {
        // Each event looked up by key (OFFSET 0 keeps the planner from joining the other way).
        try connection.query(
            """
            SELECT e.id, e.position, e.tenant_id, e.session_id, e.task_id, e.sequence, e.type, w.id AS endpoint_id, w.events
            FROM unnest($1::text[], $2::text[]) AS c(event_id, task_id)
            JOIN LATERAL (SELECT * FROM events e WHERE e.id = c.event_id AND e.task_id = c.task_id OFFSET 0) e ON true
            JOIN tasks t ON t.id = e.task_id AND t.session_id = e.session_id
            JOIN sessions s ON s.id = e.session_id
            JOIN webhook_endpoints w ON w.id = coalesce(t.delegate_endpoint_id, s.delegate_endpoint_id)
            WHERE w.status = 'active' AND w.tenant_id = e.tenant_id
            ORDER BY e.position
            """,
            [asked.map(\.eventID), asked.map(\.taskID)]
        ).compactMap { row in
            let filter = WebhookEndpointRows.eventFilter(try row.decode("events", as: [String]?.self))
            guard let type = EventType(rawValue: try row.decode("type")), DelegateEventFilter.subscribes(filter, to: type) else { return nil }
            return HeardDecision(
                eventID: try row.decode("id"), tenantID: try row.decode("tenant_id"), endpointID: try row.decode("endpoint_id"),
                position: try row.decode("position"), type: type, sessionID: try row.decode("session_id"),
                taskID: try row.decode("task_id"), sequence: try row.decode("sequence")
            )
        }
    }

    /// Records who decided a decision event that was never sent (nobody subscribed): "default".
    public func recordDecision(eventID: String, decidedBy: String) async throws {
        try await pool.withConnection { connection in
            _ = try connection.execute("UPDATE events SET decided_by = $2 WHERE id = $1 AND decided_by IS NULL", [eventID, decidedBy])
        }
    }
}
