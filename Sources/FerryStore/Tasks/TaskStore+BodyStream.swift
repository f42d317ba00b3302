import FerryCore
import Postgres

extension TaskStore {
    /// Which body stream `PUT /v1/tasks/{id}/body` supplies: the one the task asks for, or the
    /// first when the client sends it before the task starts.
    public func bodyStreamGeneration(tenantID: String, taskID: String) async throws -> Int {
        try await pool.withConnection { connection in
            guard let row = try connection.query(
                "SELECT kind, state, upload_source, body_stream_generation FROM tasks WHERE tenant_id = $1 AND id = $2",
                [tenantID, taskID]
            ).first else { throw StoreError.notFound(resource: "task") }
            guard try row.decodeJSONIfPresent("upload_source", as: UploadSource.self) == .stream else {
                throw StoreError.conflict("Only upload tasks created with body {\"stream\": true} take a streamed body.")
            }
            guard try row.decode("state", as: String.self) != TaskState.completed.rawValue else {
                throw StoreError.conflict("The task has completed.")
            }
            return max(1, try row.decode("body_stream_generation", as: Int.self))
        }
    }
}
