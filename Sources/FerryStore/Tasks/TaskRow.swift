import FerryCore
import Postgres

/// How a `tasks` row becomes a `TaskRecord`.
enum TaskRow {
    static let columns = """
        id, tenant_id, session_id, task_identifier, kind, state, priority, task_description, earliest_begin_at, \
        original_request, current_request, response, bytes_received, bytes_sent, bytes_expected_to_receive, \
        bytes_expected_to_send, bytes_client_expects_to_send, bytes_client_expects_to_receive, error, \
        download_file IS NOT NULL AS has_file, created_at, started_at, completed_at
        """

    static func decode(_ row: PostgresRow) throws -> TaskRecord {
        var task = TaskRecord(
            id: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            sessionID: try row.decode("session_id"),
            taskIdentifier: try row.decode("task_identifier"),
            kind: try TaskKind(rawValue: row.decode("kind")) ?? .data,
            state: try TaskState(rawValue: row.decode("state")) ?? .completed,
            priority: try row.decode("priority"),
            taskDescription: try row.decode("task_description"),
            earliestBeginDate: try row.decode("earliest_begin_at"),
            originalRequest: try row.decodeJSON("original_request", as: TransferRequest.self),
            currentRequest: try row.decodeJSONIfPresent("current_request", as: TransferRequest.self),
            response: try row.decodeJSONIfPresent("response", as: HTTPResponseSnapshot.self),
            countOfBytesReceived: try row.decode("bytes_received"),
            countOfBytesSent: try row.decode("bytes_sent"),
            countOfBytesExpectedToReceive: try row.decode("bytes_expected_to_receive"),
            countOfBytesExpectedToSend: try row.decode("bytes_expected_to_send"),
            error: try row.decodeJSONIfPresent("error", as: TransferError.self),
            hasDownloadedFile: try row.decode("has_file"),
            createdAt: try row.decode("created_at"),
            startedAt: try row.decode("started_at"),
            completedAt: try row.decode("completed_at")
        )
        task.countOfBytesClientExpectsToSend = try row.decode("bytes_client_expects_to_send")
        task.countOfBytesClientExpectsToReceive = try row.decode("bytes_client_expects_to_receive")
        return task
    }

    /// Reads one task of a tenant, locking it for the rest of the transaction.
    static func lock(tenantID: String, taskID: String, on connection: PostgresConnection) throws -> PostgresRow {
        guard let row = try connection.query(
            """
            SELECT \(columns), lease_owner, (lease_owner IS NOT NULL AND lease_expires_at > now()) AS is_owned,
                   checkpoint, stop_reason
            FROM tasks WHERE tenant_id = $1 AND id = $2 FOR UPDATE
            """,
            [tenantID, taskID]
        ).first else { throw StoreError.notFound(resource: "task") }
        return row
    }

    static func find(tenantID: String, taskID: String, on connection: PostgresConnection) throws -> TaskRecord {
        guard let row = try connection.query(
            "SELECT \(columns) FROM tasks WHERE tenant_id = $1 AND id = $2", [tenantID, taskID]
        ).first else { throw StoreError.notFound(resource: "task") }
        return try decode(row)
    }
}
