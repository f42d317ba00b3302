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
                let originalRequest = try JSONColumn.encode(request)
                let taskID = IDs.make("tsk")
                let state: TaskState = creation.startsImmediately ? .running : .suspended
                // The task's first event (sequence 1; the task is inserted with next_event_sequence
                // 2), whose taskIdentifier is only known in the statement.
                let summary = TaskEventData.summary(
                    id: taskID, taskIdentifier: 0, kind: creation.kind, state: state, originalRequest: request,
                    taskDescription: creation.taskDescription
                )
                let firstEvent = EventWriter.payload(["task": summary], sessionID: sessionID, taskID: taskID, sequence: 1)
                // Taking the next taskIdentifier locks the session's row until the commit, so
                // creations in a session take turns (and cannot slip past an invalidation, which
                // updates the same row). The task, its first event and the notifications are
                // therefore one statement, the last before the commit but in rare cases (a
                // delegate, a body), so the turn is short. The lock is NO KEY UPDATE: rows of
                // other transactions that refer to the session (events, finished tasks, cache
                // entries) do not wait for it.
                let inserted = try connection.query(
                    """
                    WITH session AS (
                        UPDATE sessions SET next_task_identifier = next_task_identifier + 1
                        WHERE tenant_id = $2 AND id = $3 AND state = 'valid'
                        RETURNING next_task_identifier - 1 AS task_identifier
                    ), task AS (
                        INSERT INTO tasks (id, tenant_id, session_id, task_identifier, kind, state, priority, task_description,
                                           earliest_begin_at, not_before, original_request, upload_source, bytes_expected_to_send,
                                           checkpoint, idempotency_key, idempotency_fingerprint, host,
                                           started_at, next_event_sequence)
                        SELECT $1, $2, $3, session.task_identifier, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $13, $14, $15,
                               CASE WHEN $5 = 'running' THEN now() END, 2
                        FROM session
                        RETURNING \(TaskRow.columns)
                    ), event AS (
                        INSERT INTO events (id, tenant_id, session_id, task_id, sequence, type, data)
                        SELECT $16, $2, $3, $1, 1, $17, jsonb_set($18::jsonb, '{task,taskIdentifier}', to_jsonb(task.task_identifier))
                        FROM task
                        RETURNING 1
                    )
                    SELECT task.*, (SELECT count(*) FROM event) AS events,
                           pg_notify($19, $2) AS notified_events,
                           CASE WHEN $5 = 'running' THEN pg_notify($20, $1) END AS notified_work
                    FROM task
                    """,
                    [
                        taskID, tenantID, sessionID, creation.kind.rawValue, state.rawValue, creation.priority,
                        creation.taskDescription, creation.earliestBeginDate, originalRequest, uploadSource, bytesToSend,
                        checkpoint, origin.idempotencyKey, origin.fingerprint, host.lowercased(),
                        IDs.make("evt"), EventType.taskDidCreateTask.rawValue, firstEvent,
                        NotificationChannel.events, NotificationChannel.work,
                    ]
                )
                guard let row = inserted.first else {
                    guard try !connection.query(
                        "SELECT 1 FROM sessions WHERE tenant_id = $1 AND id = $2", [tenantID, sessionID]
                    ).isEmpty else { throw StoreError.notFound(resource: "session") }
                    throw StoreError.conflict("The session is invalidated and accepts no new tasks.")
                }
                let task = try TaskRow.decode(row)
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
