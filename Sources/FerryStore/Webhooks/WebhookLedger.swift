import FerryCore
import Foundation
import Postgres

/// The webhook dispatcher's side of the database: turning events into deliveries (fan-out),
/// claiming due deliveries under short leases, recording attempts, decisions, and
/// `session.didFinishEvents`. Several instances may run dispatchers on one database.
///
/// The fan-out, claims and attempt records commit without waiting for their WAL to be flushed
/// (`CommitDurability.asynchronous`): waiting for the flush was half of what PostgreSQL's
/// sessions did in bench/decisions.sh's delegate run, most of it for the slots' claims. A crash
/// of PostgreSQL itself may forget the last of them: a lease (the delivery is claimed again), a
/// record (the delivery is sent again: at least once; a decision's `decidedBy`, written with its
/// record, is unset until then), deliveries the fan-out made (made again from the events, which
/// the fan-out's cursor, forgotten with them, still lists). Events, and the deliveries an owner
/// makes with them, are written durably. A forgotten lease's token is never issued again (see
/// `nextLeaseToken`), so a slot still sending under it cannot record over the next lease.
public struct WebhookLedger: Sendable {
    let pool: PostgresPool
    public let instanceID: String

    public init(pool: PostgresPool, instanceID: String) {
        self.pool = pool
        self.instanceID = instanceID
    }

    /// The `ferry_events` payload that says deliveries changed (a retry, an endpoint enabled)
    /// rather than that events were written.
    public static let deliveriesChangedPayload = "webhooks"

    static let decisionTypes = EventType.allCases.filter(\.isDecision).map(\.rawValue)

    /// SQL: the token of a new lease of a delivery whose token is now `current`. One more than
    /// the last would do if every lease were durable, but claims commit asynchronously: after a
    /// crash of PostgreSQL the last claim may be forgotten and "one more" issued a second time,
    /// while the slot that held the forgotten lease, alive in a running instance, is still
    /// sending and would fence its record with the same token. The server's clock in
    /// microseconds is a floor no forgotten token reaches: it was issued before the crash, and
    /// the clock has moved on since (unless it is stepped back by more than the restart took).
    static func nextLeaseToken(after current: String) -> String {
        "greatest(\(current) + 1, (extract(epoch FROM clock_timestamp()) * 1000000)::int8)"
    }

    public struct FanOut: Sendable {
        /// False when another instance was fanning out; nothing was done.
        public var didRun: Bool
        public var eventsRead: Int
        /// Events read that an active delegate subscribes to, whether their delivery was made
        /// now or already (by the owner that wrote the event, `makeOwnerDeliveries`).
        public var eventsSubscribed: Int
        public var deliveriesCreated: Int
        /// The endpoints of the deliveries made.
        public var endpointIDs: Set<String>
        /// How far the log has been fanned out now.
        public var position: Int64
        /// Sessions of the events read (candidates for `session.didFinishEvents`).
        public var sessionIDs: [String]
    }

    /// Creates the deliveries of the next events up to `horizon` (a safe position, see
    /// `EventHorizon`), in log order, and advances the shared cursor in the same transaction.
    /// A delivery is made for each event whose task or session has an active delegate that
    /// subscribes to its type, unless it exists: a transfer's owner makes those of the events it
    /// writes (`makeOwnerDeliveries`), so this makes those of the events the API writes, of
    /// session events, and of an owner's write that could not make them. Decision deliveries are
    /// left to `decide`: the queue only sends one that nobody decided within `decisionGrace`.
    public func fanOut(upTo horizon: Int64, limit: Int, decisionGrace: Duration) async throws -> FanOut {
        let optIn = DelegateEventFilter.optIn.map(\.rawValue)
        return try await pool.withTransaction(commit: .asynchronous) { connection in
            guard let cursorRow = try connection.query(
                "SELECT position FROM webhook_dispatch WHERE id = 1 FOR UPDATE SKIP LOCKED"
            ).first else { return FanOut(didRun: false, eventsRead: 0, eventsSubscribed: 0, deliveriesCreated: 0, endpointIDs: [], position: 0, sessionIDs: []) }
            let cursor = try cursorRow.decode(0, as: Int64.self)
            guard horizon > cursor else {
                return FanOut(didRun: true, eventsRead: 0, eventsSubscribed: 0, deliveriesCreated: 0, endpointIDs: [], position: cursor, sessionIDs: [])
            }
            let result = try connection.query(
                """
                WITH batch AS (
                    SELECT e.position, e.id, e.tenant_id, e.session_id, e.task_id, e.sequence, e.type
                    FROM events e WHERE e.position > $1 AND e.position <= $2
                    ORDER BY e.position LIMIT $3
                ), routed AS (
                    -- Each event's session, task and endpoint are looked up by key, one row each
                    -- (OFFSET 0 keeps the planner from turning a look-up into a join): with the
                    -- statistics lagging a burst, the planner joined each batch with every endpoint
                    -- of the tenant (bench/receivers.sh: 300,000 rows, 4 s a batch, with 1,000 endpoints).
                    SELECT b.*, CASE WHEN b.task_id IS NULL THEN s.delegate_endpoint_id
                                     ELSE coalesce(t.delegate_endpoint_id, s.delegate_endpoint_id) END AS endpoint_id
                    FROM batch b
                    CROSS JOIN LATERAL (SELECT delegate_endpoint_id FROM sessions WHERE id = b.session_id OFFSET 0) s
                    LEFT JOIN LATERAL (SELECT delegate_endpoint_id FROM tasks WHERE id = b.task_id OFFSET 0) t ON true
                ), subscribed AS (
                    SELECT r.* FROM routed r
                    CROSS JOIN LATERAL (
                        SELECT status, events FROM webhook_endpoints WHERE id = r.endpoint_id AND tenant_id = r.tenant_id OFFSET 0
                    ) w
                    WHERE w.status = 'active'
                      AND \(Self.subscribed("w.events", "r.type", optIn: "$6"))
                ), inserted AS (
                    INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type,
                                                    session_id, task_id, stream_id, sequence, is_decision, next_attempt_at)
                    SELECT \(Self.newDeliveryID), r.tenant_id, r.endpoint_id, r.id, r.position,
                           r.type, r.session_id, r.task_id, coalesce(r.task_id, r.session_id), r.sequence,
                           r.type = ANY($4::text[]),
                           \(Self.firstAttemptAt(type: "r.type", decisionTypes: "$4", grace: "$5"))
                    FROM subscribed r
                    ORDER BY r.position
                    ON CONFLICT (event_id, endpoint_id) DO NOTHING
                    RETURNING endpoint_id
                )
                SELECT (SELECT count(*) FROM batch) AS read, (SELECT max(position) FROM batch) AS last_position,
                       (SELECT count(*) FROM subscribed) AS subscribed, (SELECT count(*) FROM inserted) AS created,
                       (SELECT array_agg(DISTINCT endpoint_id) FROM inserted) AS endpoints,
                       (SELECT array_agg(DISTINCT session_id) FROM batch) AS sessions
                """,
                [cursor, horizon, limit, Self.decisionTypes, decisionGrace.secondsValue, optIn]
            ).firstRow()
            let read = try result.decode("read", as: Int.self)
            // A short batch read everything up to the horizon (gaps are rolled-back positions).
            let position = read < limit ? horizon : try result.decode("last_position", as: Int64.self)
            try connection.execute("UPDATE webhook_dispatch SET position = $1, updated_at = now() WHERE id = 1", [position])
            return FanOut(
                didRun: true, eventsRead: read, eventsSubscribed: try result.decode("subscribed", as: Int.self),
                deliveriesCreated: try result.decode("created", as: Int.self),
                endpointIDs: Set(try result.decode("endpoints", as: [String]?.self) ?? []),
                position: position, sessionIDs: try result.decode("sessions", as: [String]?.self) ?? []
            )
        }
    }

    /// How far the log has been fanned out.
    public func dispatchPosition() async throws -> Int64 {
        try await pool.withConnection(commit: .readOnly) { connection in
            try connection.query("SELECT position FROM webhook_dispatch WHERE id = 1").firstRow().decode(0, as: Int64.self)
        }
    }

    /// The safe horizon, advanced by one round (see `EventHorizon`).
    public func advance(_ horizon: EventHorizon) async throws -> EventHorizon {
        try await pool.withConnection(commit: .readOnly) { connection in
            var next = horizon
            try next.advance(on: connection)
            return next
        }
    }

    /// The horizon with its pending candidate declared safe if its transactions have ended; no
    /// new candidate is proposed.
    public func settle(_ horizon: EventHorizon) async throws -> EventHorizon {
        guard horizon.isWaiting else { return horizon }
        return try await pool.withConnection(commit: .readOnly) { connection in
            var next = horizon
            try next.resolve(on: connection)
            return next
        }
    }
}
