import FerryCore
import Postgres

extension TaskStore {
    /// The most tasks `getTasksWithCompletionHandler` and `getAllTasks` answer in one go: they
    /// are not paginated, as URLSession's are not, so their size is bounded here instead.
    public static let maximumUnfinishedTasks = 10_000

    /// The session's unfinished tasks (every state but `completed`), in `taskIdentifier` order:
    /// what URLSession's `getTasksWithCompletionHandler` and `getAllTasks` answer. A completed
    /// task is no longer the session's. Refuses (409) a session with more than
    /// `maximumUnfinishedTasks`, whose client must page through `GET /v1/sessions/{id}/tasks`.
    public func unfinished(tenantID: String, sessionID: String) async throws -> [TaskRecord] {
        try await pool.withConnection { connection in
            try SessionExistence.require(tenantID: tenantID, sessionID: sessionID, on: connection)
            // Reads through tasks_unfinished (0005): completed tasks are never walked.
            let rows = try connection.query(
                """
                SELECT \(TaskRow.columns) FROM tasks
                WHERE tenant_id = $1 AND session_id = $2 AND state <> 'completed'
                ORDER BY task_identifier
                LIMIT $3
                """,
                [tenantID, sessionID, Self.maximumUnfinishedTasks + 1]
            )
            guard rows.count <= Self.maximumUnfinishedTasks else {
                throw StoreError.conflict(
                    "The session has more than \(Self.maximumUnfinishedTasks) unfinished tasks; "
                        + "page through them with GET /v1/sessions/{id}/tasks?state=running,suspended,canceling."
                )
            }
            return try rows.map(TaskRow.decode)
        }
    }
}
