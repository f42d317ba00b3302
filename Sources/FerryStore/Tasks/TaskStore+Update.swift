import FerryCore
import Postgres

extension TaskStore {
    /// `PATCH /v1/tasks/{id}`: changes `priority` and `taskDescription`, as URLSessionTask allows
    /// at any time. The claim orders a session's queued tasks by `priority` from the row; a task
    /// already claimed and waiting inside an instance for a connection is reordered there, told
    /// through `NotificationChannel.priority` in the same transaction. A transfer under way keeps
    /// going.
    public func update(tenantID: String, taskID: String, _ update: TaskUpdate) async throws -> TaskRecord {
        let (setsDescription, description): (Bool, String?) = switch update.taskDescription {
        case .some(let value): (true, value)
        case .none: (false, nil)
        }
        return try await pool.withTransaction { connection in
            guard let row = try connection.query(
                """
                UPDATE tasks SET
                    priority = coalesce($3::float8, priority),
                    task_description = CASE WHEN $4 THEN $5 ELSE task_description END,
                    bytes_client_expects_to_send = coalesce($6::int8, bytes_client_expects_to_send),
                    bytes_client_expects_to_receive = coalesce($7::int8, bytes_client_expects_to_receive),
                    updated_at = now()
                WHERE tenant_id = $1 AND id = $2
                RETURNING \(TaskRow.columns)
                """,
                [
                    tenantID, taskID, update.priority, setsDescription, description,
                    update.countOfBytesClientExpectsToSend, update.countOfBytesClientExpectsToReceive,
                ]
            ).first else { throw StoreError.notFound(resource: "task") }
            if let priority = update.priority {
                // Only a leased task has an owner to tell; the payload carries the value, so the
                // owner needs no query. Sent at commit, after the row says the same.
                try connection.execute(
                    """
                    SELECT pg_notify($1, id || ' ' || lease_owner || ' ' || $3::float8::text)
                    FROM tasks WHERE id = $2 AND state = 'running' AND lease_owner IS NOT NULL
                    """,
                    [NotificationChannel.priority, taskID, priority]
                )
            }
            return try TaskRow.decode(row)
        }
    }
}
