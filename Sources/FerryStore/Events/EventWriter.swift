import FerryCore
import Foundation
import Postgres

/// Appends events to the outbox inside the caller's transaction, so an event exists if and
/// only if the state change it reports committed. Task events after the first go through
/// `EventBatch`.
enum EventWriter {
    /// The task a task event belongs to.
    struct TaskRef: Sendable {
        var tenantID: String
        var sessionID: String
        var taskID: String
    }

    /// A new task's first event, sequence 1: the task was inserted with `next_event_sequence` 2.
    static func appendFirst(_ type: EventType, for task: TaskRef, data: [String: JSONValue], on connection: PostgresConnection) throws {
        try insert(type, id: nil, tenantID: task.tenantID, sessionID: task.sessionID, taskID: task.taskID, sequence: 1, data: data, on: connection)
    }

    /// Appends a session event with the next per-session sequence number.
    @discardableResult
    static func appendSessionEvent(
        _ type: EventType, tenantID: String, sessionID: String, data: [String: JSONValue], on connection: PostgresConnection
    ) throws -> Int64 {
        let sequence = try connection.query(
            "UPDATE sessions SET next_event_sequence = next_event_sequence + 1 WHERE id = $1 RETURNING next_event_sequence - 1",
            [sessionID]
        )[0].decode(0, as: Int64.self)
        try insert(type, id: nil, tenantID: tenantID, sessionID: sessionID, taskID: nil, sequence: sequence, data: data, on: connection)
        return sequence
    }

    private static func insert(
        _ type: EventType, id: String?, tenantID: String, sessionID: String, taskID: String?, sequence: Int64,
        data: [String: JSONValue], on connection: PostgresConnection
    ) throws {
        var payload = data
        payload["sessionId"] = .string(sessionID)
        if let taskID { payload["taskId"] = .string(taskID) }
        payload["sequence"] = .number(Double(sequence))
        try connection.execute(
            """
            INSERT INTO events (id, tenant_id, session_id, task_id, sequence, type, data)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """,
            [id ?? IDs.make("evt"), tenantID, sessionID, taskID, sequence, type.rawValue, PostgresJSON(data: Data(JSONValue.object(payload).serialized()))]
        )
        // Identical notifications within one transaction are folded into one by PostgreSQL.
        try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.events, tenantID])
    }
}
