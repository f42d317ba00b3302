import FerryCore
import Foundation
import Postgres

/// The event log as tenants read it: the same events the webhooks deliver, for sessions with
/// or without a delegate. Always scoped by tenant.
public struct EventLogStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// A task's events in `sequence` order; `after` is a sequence number. Sequences are gapless
    /// and each commits only after the one before it, so no horizon is needed here.
    public func taskEvents(tenantID: String, taskID: String, after: Int64?, limit: Int) async throws -> Page<EventRecord> {
        try await pool.withConnection { connection in
            guard try !connection.query(
                "SELECT 1 FROM tasks WHERE tenant_id = $1 AND id = $2", [tenantID, taskID]
            ).isEmpty else { throw StoreError.notFound(resource: "task") }
            let rows = try connection.query(
                """
                SELECT \(EventRecord.columns) FROM events e
                WHERE e.task_id = $1 AND e.tenant_id = $2 AND e.sequence > $3
                ORDER BY e.sequence
                LIMIT $4
                """,
                [taskID, tenantID, after ?? 0, limit + 1]
            )
            return try Page(rows: rows, limit: limit, decode: EventRecord.decode, cursor: { String($0.sequence) })
        }
    }

    /// A session's events (its own and its tasks') in log order, up to a safe horizon;
    /// `after` is a position.
    public func sessionEvents(tenantID: String, sessionID: String, after: Int64?, limit: Int) async throws -> Page<EventRecord> {
        let horizon = try await EventHorizon.current(pool: pool)
        return try await pool.withConnection { connection in
            try SessionExistence.require(tenantID: tenantID, sessionID: sessionID, on: connection)
            let rows = try connection.query(
                """
                SELECT \(EventRecord.columns) FROM events e
                WHERE e.session_id = $1 AND e.tenant_id = $2 AND e.position > $3 AND e.position <= $4
                ORDER BY e.position
                LIMIT $5
                """,
                [sessionID, tenantID, after ?? 0, horizon, limit + 1]
            )
            return try Page(rows: rows, limit: limit, decode: EventRecord.decode, cursor: { String($0.position) })
        }
    }

    /// The tenant's events after `position` up to `horizon` (an event stream's next batch).
    public func tenantEvents(tenantID: String, after position: Int64, upTo horizon: Int64, sessionID: String? = nil, limit: Int) async throws -> [EventRecord] {
        var list = ListConditions()
        list.require("e.tenant_id = \(list.bind(tenantID)) AND e.position > \(list.bind(position)) AND e.position <= \(list.bind(horizon))")
        list.filter(sessionID) { "e.session_id = \($0)" }
        let pageSize = list.bind(limit)
        return try await pool.withConnection { [list] connection in
            try connection.query(
                "SELECT \(EventRecord.columns) FROM events e \(list.whereClause) ORDER BY e.position LIMIT \(pageSize)", list.parameters
            ).map(EventRecord.decode)
        }
    }

    /// A horizon that a long-lived reader advances round after round.
    public func advance(_ horizon: EventHorizon) async throws -> EventHorizon {
        try await pool.withConnection { connection in
            var next = horizon
            try next.advance(on: connection)
            return next
        }
    }

    /// Whether `position` is within the log written so far: every position a tenant was shown
    /// is, and a made-up cursor that happens to decode almost never is.
    public func isWithinLog(_ position: Int64) async throws -> Bool {
        try await pool.withConnection { connection in
            try connection.query(
                "SELECT $1::int8 <= CASE WHEN is_called THEN last_value ELSE 0 END FROM events_position_seq", [position]
            ).firstRow().decode(0, as: Bool.self)
        }
    }

    /// The current safe horizon, for a reader that starts at the end of the log.
    public func safePosition() async throws -> Int64 {
        try await EventHorizon.current(pool: pool)
    }
}
