import FerryCore
import Postgres

extension TaskStore {
    /// Which body stream `PUT /v1/tasks/{id}/body` supplies: the one the task's transfer asks
    /// for, or, when no transfer of it goes on (not started yet, suspended, being stopped, or
    /// resumed and not claimed again), the one its next transfer will ask for first. A client
    /// that resumes a task and sends the body at once is thus not refused, nor its body put
    /// under a stream that is spent: each claim counts the stream its transfer asks for first
    /// (see `TransferLedger.claim`), one after those asked for before.
    public func bodyStreamGeneration(tenantID: String, taskID: String) async throws -> Int {
        try await pool.withConnection { connection in
            guard let row = try connection.query(
                """
                SELECT kind, state, upload_source, body_stream_generation,
                       (state = 'running' AND lease_owner IS NOT NULL AND stop_reason IS NULL) AS has_transfer
                FROM tasks WHERE tenant_id = $1 AND id = $2
                """,
                [tenantID, taskID]
            ).first else { throw StoreError.notFound(resource: "task") }
            guard try row.decodeJSONIfPresent("upload_source", as: UploadSource.self) == .stream else {
                throw StoreError.conflict("Only upload tasks created with body {\"stream\": true} take a streamed body.")
            }
            guard try row.decode("state", as: String.self) != TaskState.completed.rawValue else {
                throw StoreError.conflict("The task has completed.")
            }
            let asked = try row.decode("body_stream_generation", as: Int.self)
            return try row.decode("has_transfer", as: Bool.self) ? max(1, asked) : asked + 1
        }
    }
}
