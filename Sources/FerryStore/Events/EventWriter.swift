import FerryCore
import Foundation
import Postgres

/// Appends events to the outbox inside the caller's transaction, so an event exists if and
/// only if the state change it reports committed. Task events go through `EventBatch`, but
/// for a task's first, which is inserted with the task.
enum EventWriter {
    /// The task a task event belongs to.
    struct TaskRef: Sendable {
        var tenantID: String
        var sessionID: String
        var taskID: String
    }

    /// An event's `data` as stored and delivered: the delegate method's arguments with the ids
    /// that place it, and its sequence when it is known before the insert.
    static func payload(_ data: [String: JSONValue], sessionID: String, taskID: String?, sequence: Int64? = nil) -> String {
        var payload = data
        payload["sessionId"] = .string(sessionID)
        if let taskID { payload["taskId"] = .string(taskID) }
        if let sequence { payload["sequence"] = .number(Double(sequence)) }
        return String(decoding: JSONValue.object(payload).serialized(), as: UTF8.self)
    }

    /// Appends a session event with the next per-session sequence number.
    @discardableResult
    static func appendSessionEvent(
        _ type: EventType, tenantID: String, sessionID: String, data: [String: JSONValue], on connection: PostgresConnection
    ) throws -> Int64 {
        let sequence = try connection.query(
            "UPDATE sessions SET next_event_sequence = next_event_sequence + 1 WHERE id = $1 RETURNING next_event_sequence - 1",
            [sessionID]
        ).firstRow().decode(0, as: Int64.self)
        try connection.execute(
            """
            INSERT INTO events (id, tenant_id, session_id, task_id, sequence, type, data)
            VALUES ($1, $2, $3, NULL, $4, $5, $6::jsonb)
            """,
            [IDs.make("evt"), tenantID, sessionID, sequence, type.rawValue, payload(data, sessionID: sessionID, taskID: nil, sequence: sequence)]
        )
        // Identical notifications within one transaction are folded into one by PostgreSQL.
        try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.events, tenantID])
        return sequence
    }
}
