import FerryCore
import Foundation
import Postgres

/// Tasks, always scoped by tenant.
public struct TaskStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// What a new task starts from besides its creation body.
    public struct Origin: Sendable {
        /// Set when the task continues a download from resume data.
        public var checkpoint: TransferCheckpoint?
        /// The task whose partial file the checkpoint continues (resume data names it). The
        /// file passes to the new task: resume data can be used once.
        public var adoptsPartialFileOf: String?
        /// The `Idempotency-Key` header and a digest of the request body it came with.
        public var idempotencyKey: String?
        public var fingerprint: [UInt8]?

        public init(
            checkpoint: TransferCheckpoint? = nil, adoptsPartialFileOf: String? = nil,
            idempotencyKey: String? = nil, fingerprint: [UInt8]? = nil
        ) {
            self.checkpoint = checkpoint
            self.adoptsPartialFileOf = adoptsPartialFileOf
            self.idempotencyKey = idempotencyKey
            self.fingerprint = fingerprint
        }
    }

    /// Runs `body` in a transaction; or, when it runs a single statement that writes, without
    /// BEGIN and COMMIT: the statement is a transaction of its own.
    private func run<T: Sendable>(asOneStatement: Bool, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        asOneStatement ? try await pool.withConnection(body) : try await pool.withTransaction(body)
    }

    /// Creates a task in a session, suspended unless `startsImmediately`. With an idempotency key
    /// that was already used for the same body, returns that task instead (`created` false).
    /// - Parameter host: the request URL's host, which `httpMaximumConnectionsPerHost` counts against.
    public func create(
        tenantID: String, sessionID: String, _ creation: TaskCreation, request: TransferRequest, host: String, origin: Origin
    ) async throws -> (task: TaskRecord, created: Bool) {
        let uploadSource = try JSONColumn.encodeOptional(creation.uploadBody.map(UploadSource.init))
        let checkpoint = try JSONColumn.encodeOptional(origin.checkpoint)
        let requestBody: [UInt8]? = switch creation.uploadBody {
        case .inline(let bytes): bytes
        default: creation.requestBody
        }
        let inlineBytesToSend: Int64 = switch creation.uploadBody {
        case .inline(let bytes): Int64(bytes.count)
        case .stream: transferSizeUnknown
        case .blob, nil: Int64(creation.requestBody?.count ?? 0)
        }
        // The common creation is the one statement below, which is a transaction of its own:
        // no BEGIN and COMMIT round trips while the session's row is locked.
        var isOneStatement = origin.idempotencyKey == nil && origin.adoptsPartialFileOf == nil && creation.delegate == nil && requestBody == nil
        if case .blob = creation.uploadBody { isOneStatement = false }
        do {
            return try await run(asOneStatement: isOneStatement) { connection in
                if let existing = try Self.findIdempotent(tenantID: tenantID, sessionID: sessionID, origin: origin, on: connection) {
                    return (existing, false)
                }
                if let previousTask = origin.adoptsPartialFileOf, let partialFile = origin.checkpoint?.partialFile {
                    let adopted = try connection.query(
                        """
                        UPDATE tasks SET checkpoint = NULL
                        WHERE id = $1 AND tenant_id = $2 AND state = 'completed' AND checkpoint->>'partialFile' = $3
                        RETURNING id
                        """,
                        [previousTask, tenantID, partialFile]
                    )
                    guard !adopted.isEmpty else {
                        throw StoreError.conflict("This resume data was already used, or its partial file is no longer kept.")
                    }
                }
                var bytesToSend = inlineBytesToSend
                var request = request
                if case .blob(let blobID) = creation.uploadBody {
                    guard let blob = try connection.query(
                        "SELECT size FROM blobs WHERE tenant_id = $1 AND id = $2", [tenantID, blobID]
                    ).first else {
                        throw StoreError.invalidReference(field: "body.blob", message: "there is no blob \(blobID); upload it with PUT /v1/blobs first.")
                    }
                    bytesToSend = try blob.decode("size", as: Int64.self)
                    request.httpBodyLength = bytesToSend
                }
                let taskID = IDs.make("tsk")
                let newTask = NewTask(
                    id: taskID, tenantID: tenantID, sessionID: sessionID, creation: creation, request: request,
                    uploadSource: uploadSource, bytesToSend: bytesToSend, checkpoint: checkpoint,
                    idempotencyKey: origin.idempotencyKey, fingerprint: origin.fingerprint, host: host
                )
                guard let task = try newTask.insert(on: connection) else {
                    throw try Self.sessionRefusal(tenantID: tenantID, sessionID: sessionID, on: connection)
                }
                if let delegate = creation.delegate {
                    try WebhookEndpointRows.attach(delegate, toTask: taskID, sessionID: sessionID, tenantID: tenantID, on: connection)
                }
                if let requestBody {
                    try connection.execute("INSERT INTO task_bodies (task_id, request_body) VALUES ($1, $2)", [taskID, requestBody])
                }
                return (task, true)
            }
        } catch let error as PostgresError where error.isUniqueViolation && origin.idempotencyKey != nil {
            // Two requests with the same key raced; the other one created the task.
            return try await pool.withConnection { connection in
                guard let existing = try Self.findIdempotent(tenantID: tenantID, sessionID: sessionID, origin: origin, on: connection) else { throw error }
                return (existing, false)
            }
        }
    }

    public func find(tenantID: String, id: String) async throws -> TaskRecord {
        try await pool.withConnection { connection in
            try TaskRow.find(tenantID: tenantID, taskID: id, on: connection)
        }
    }

    /// Filters of `GET /v1/sessions/{id}/tasks`.
    public struct ListFilter: Sendable {
        public var states: [TaskState]?
        public var kinds: [TaskKind]?

        public init(states: [TaskState]? = nil, kinds: [TaskKind]? = nil) {
            self.states = states
            self.kinds = kinds
        }
    }

    /// A page of a session's tasks in `taskIdentifier` order; `after` is the last id of the previous page.
    public func list(tenantID: String, sessionID: String, filter: ListFilter, limit: Int, after: String?) async throws -> Page<TaskRecord> {
        try await pool.withConnection { connection in
            guard try !connection.query(
                "SELECT 1 FROM sessions WHERE tenant_id = $1 AND id = $2", [tenantID, sessionID]
            ).isEmpty else { throw StoreError.notFound(resource: "session") }
            let rows = try connection.query(
                """
                SELECT \(TaskRow.columns) FROM tasks
                WHERE tenant_id = $1 AND session_id = $2
                  AND ($3::text[] IS NULL OR state = ANY($3))
                  AND ($4::text[] IS NULL OR kind = ANY($4))
                  AND ($5::text IS NULL OR task_identifier > (SELECT task_identifier FROM tasks WHERE id = $5 AND session_id = $2))
                ORDER BY task_identifier
                LIMIT $6
                """,
                [tenantID, sessionID, filter.states?.map(\.rawValue), filter.kinds?.map(\.rawValue), after, limit + 1]
            )
            return try Page(rows: rows, limit: limit, decode: TaskRow.decode, cursor: \.id)
        }
    }

    /// A data or upload task's response body, once it has one.
    public func responseBody(tenantID: String, taskID: String) async throws -> (task: TaskRecord, body: [UInt8]?) {
        try await pool.withConnection { connection in
            let task = try TaskRow.find(tenantID: tenantID, taskID: taskID, on: connection)
            let body = try connection.query("SELECT response_body FROM task_bodies WHERE task_id = $1", [taskID])
                .first?.decode("response_body", as: [UInt8]?.self)
            return (task, body ?? nil)
        }
    }

    /// The task's `URLSessionTaskMetrics`, once a transfer ended.
    public func metrics(tenantID: String, taskID: String) async throws -> JSONValue? {
        try await pool.withConnection { connection in
            guard let row = try connection.query(
                "SELECT metrics FROM tasks WHERE tenant_id = $1 AND id = $2", [tenantID, taskID]
            ).first else { throw StoreError.notFound(resource: "task") }
            return try row.decodeJSONIfPresent("metrics", as: JSONValue.self)
        }
    }

    /// Forgets a finished download's file (`DELETE /v1/tasks/{id}/file`). Returns its name, to remove.
    public func forgetDownloadedFile(tenantID: String, taskID: String) async throws -> String? {
        try await pool.withConnection { connection in
            let rows = try connection.query(
                """
                UPDATE tasks t SET download_file = NULL, updated_at = now()
                FROM (SELECT id, download_file FROM tasks WHERE tenant_id = $1 AND id = $2 FOR UPDATE) old
                WHERE t.id = old.id
                RETURNING old.download_file
                """,
                [tenantID, taskID]
            )
            guard let row = rows.first else { throw StoreError.notFound(resource: "task") }
            return try row.decode("download_file", as: String?.self)
        }
    }

    /// Why a valid session's row was not found: the session is not there (for this tenant),
    /// or it is invalidated.
    static func sessionRefusal(tenantID: String, sessionID: String, on connection: PostgresConnection) throws -> StoreError {
        guard try !connection.query("SELECT 1 FROM sessions WHERE tenant_id = $1 AND id = $2", [tenantID, sessionID]).isEmpty else {
            return StoreError.notFound(resource: "session")
        }
        return StoreError.conflict("The session is invalidated and accepts no new tasks.")
    }

    /// The task an idempotency key already made — for the same session and body, else the key is
    /// being reused for a different request.
    private static func findIdempotent(tenantID: String, sessionID: String, origin: Origin, on connection: PostgresConnection) throws -> TaskRecord? {
        guard let key = origin.idempotencyKey else { return nil }
        guard let row = try connection.query(
            "SELECT \(TaskRow.columns), idempotency_fingerprint FROM tasks WHERE tenant_id = $1 AND idempotency_key = $2",
            [tenantID, key]
        ).first else { return nil }
        guard try row.decode("idempotency_fingerprint", as: [UInt8]?.self) == origin.fingerprint,
              try row.decode("session_id", as: String.self) == sessionID
        else { throw StoreError.idempotencyKeyReused }
        return try TaskRow.decode(row)
    }
}
