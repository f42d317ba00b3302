import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// What an owner's transaction that wrote events does for the webhooks (with `terms`: this
    /// instance sends them): makes the deliveries of the events of `delegates`' tasks, those of
    /// the decision events in `asking` claimed for this instance, and takes what must be sent
    /// before each decision (`DecisionClaim.earlier`), so that a decision waits neither for the
    /// fan-out nor for a slot in the queue. Answers the claims by event id; a decision event
    /// without one (nobody hears it, or its delivery is finished or being attempted elsewhere)
    /// is recorded as decided by "default".
    ///
    /// `delegates`: each task written in this transaction with its delegate endpoint (the task's
    /// own or its session's).
    public static func writeDeliveries(
        for delegates: [(taskID: String, endpointID: String)], asking: [AskedDecision], terms: DecisionClaimTerms,
        on connection: PostgresConnection
    ) throws -> DeliveriesWritten {
        var written = DeliveriesWritten()
        let made = try makeOwnerDeliveries(delegates, claiming: Set(asking.map(\.eventID)), terms: terms, on: connection)
        written.endpointIDs = made.endpointIDs
        guard !asking.isEmpty else { return written }
        let claimedByID = Set(made.claimed.map(\.event.id))
        let decisions = made.claimed
            + (try claimDecisionDeliveries(asking.filter { !claimedByID.contains($0.eventID) }, terms: terms, on: connection))
        let earlier = try takeEarlier(than: decisions, instanceID: terms.instanceID, lease: terms.lease, answered: terms.answered, on: connection)
        for decision in decisions {
            written.claims[decision.event.id] = DecisionClaim(decision: decision, earlier: earlier[decision.deliveryID] ?? .none)
        }
        let unclaimed = asking.map(\.eventID).filter { written.claims[$0] == nil }
        if !unclaimed.isEmpty {
            try connection.execute("UPDATE events SET decided_by = 'default' WHERE id = ANY($1) AND decided_by IS NULL", [unclaimed])
        }
        return written
    }

    /// Makes, in the owner's transaction that writes a task's events, the deliveries of those
    /// events and of the task's earlier events the fan-out has not reached yet, with the
    /// fan-out's rules (an active delegate endpoint of the task's tenant that subscribes to the
    /// type; a decision's delivery left to its owner for `decisionGrace`). The deliveries of the
    /// events in `claiming` (decisions the owner asks about now) are made claimed by this
    /// instance, and answered loaded; with them, the endpoints that have new deliveries.
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
        _ delegates: [(taskID: String, endpointID: String)], claiming: Set<String>, terms: DecisionClaimTerms,
        on connection: PostgresConnection
    ) throws -> (endpointIDs: Set<String>, claimed: [ClaimedDelivery]) {
        guard !delegates.isEmpty else { return ([], []) }
        // One row: the endpoints, with each claimed delivery loaded beside them (none: NULLs).
        let rows = try connection.query(
            """
            WITH routed AS (
                SELECT e.id, e.position, e.tenant_id, e.session_id, e.task_id, e.sequence, e.type, w.id AS endpoint_id,
                       e.id = ANY($6::text[]) AS claiming
                FROM unnest($1::text[], $2::text[]) AS r(task_id, endpoint_id)
                JOIN webhook_endpoints w ON w.id = r.endpoint_id
                CROSS JOIN LATERAL (\(Self.eventsNotFannedOut(ofTask: "r.task_id"))) e
                WHERE w.status = 'active' AND w.tenant_id = e.tenant_id
                  AND \(Self.subscribed("w.events", "e.type", optIn: "$3"))
            ), inserted AS (
                INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type,
                                                session_id, task_id, stream_id, sequence, is_decision, next_attempt_at,
                                                lease_owner, lease_token, lease_expires_at)
                SELECT \(Self.newDeliveryID), r.tenant_id, r.endpoint_id, r.id, r.position,
                       r.type, r.session_id, r.task_id, r.task_id, r.sequence, r.type = ANY($4::text[]),
                       CASE WHEN r.claiming THEN now() ELSE \(Self.firstAttemptAt(type: "r.type", decisionTypes: "$4", grace: "$5")) END,
                       CASE WHEN r.claiming THEN $7 END, CASE WHEN r.claiming THEN 1 ELSE 0 END,
                       CASE WHEN r.claiming THEN now() + make_interval(secs => $8) END
                FROM routed r
                ORDER BY r.position
                ON CONFLICT (event_id, endpoint_id) DO NOTHING
                RETURNING *
            )
            SELECT made.endpoints, \(ClaimedDelivery.columns)
            FROM (SELECT coalesce(array_agg(DISTINCT endpoint_id), '{}') AS endpoints FROM inserted) made
            LEFT JOIN (inserted d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id)
                ON d.lease_owner IS NOT NULL
            ORDER BY e.position
            """,
            [
                delegates.map(\.taskID), delegates.map(\.endpointID), DelegateEventFilter.optIn.map(\.rawValue),
                Self.decisionTypes, terms.decisionGrace.secondsValue, Array(claiming), terms.instanceID, terms.lease.secondsValue,
            ]
        )
        let endpointIDs = Set(try rows.first?.decode("endpoints", as: [String].self) ?? [])
        let claimed = try rows.filter { try $0.decode("delivery_id", as: String?.self) != nil }.map(ClaimedDelivery.decode)
        return (endpointIDs, claimed)
    }
}

extension WebhookLedger {
    /// SQL: the events of a task (`taskID`, an SQL expression) the fan-out has not reached, read
    /// through its (task_id, sequence) index from the last one it has reached on: a task's
    /// positions grow with its sequence (each of its writers holds its row lock and takes its
    /// position after the previous one committed), so those events are the end of its sequence.
    /// Filtered on position alone, the index gave every event the task ever had, on every write
    /// (a long download's progress events, by the thousand).
    static func eventsNotFannedOut(ofTask taskID: String) -> String {
        """
        SELECT * FROM events e
        WHERE e.task_id = \(taskID)
          AND e.sequence > coalesce((
              SELECT x.sequence FROM events x
              WHERE x.task_id = \(taskID) AND x.position <= (SELECT position FROM webhook_dispatch WHERE id = 1)
              ORDER BY x.sequence DESC LIMIT 1), 0)
          AND e.position > (SELECT position FROM webhook_dispatch WHERE id = 1)
        -- OFFSET 0: a look-up per task, never a join of every event.
        OFFSET 0
        """
    }
}

/// What an owner's transaction did for the webhooks (`TransferLedger.record`, `finish`).
public struct DeliveriesWritten: Sendable {
    /// The claimed decisions, by event id (see `WebhookLedger.writeDeliveries`).
    public var claims: [String: DecisionClaim] = [:]
    /// The endpoints with deliveries made by the transaction, for a claim to take them.
    public var endpointIDs: Set<String> = []
}

/// Making an owner's deliveries or claiming its decisions failed, which failed its transaction:
/// the writer tries again without them (the fan-out makes those deliveries, the decisions take
/// the default), so that webhooks never hold up a transfer's state.
public struct DeliveriesNotWritten: Error, CustomStringConvertible {
    public var underlying: any Error
    public var description: String { "making the events' deliveries failed: \(underlying)" }
}
