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

    /// Creates a task in a session, suspended unless `startsImmediately`. With an idempotency key
    /// that was already used for the same body, returns that task instead (`created` false).
    /// - Parameter host: the request URL's host, which `httpMaximumConnectionsPerHost` counts against.
    public func create(
        tenantID: String, sessionID: String, _ creation: TaskCreation, request: TransferRequest, host: String, origin: Origin
    ) async throws -> (task: TaskRecord, created: Bool) {
        let (requestBody, bytesToSend, blobID): ([UInt8]?, Int64, String?) = switch creation.uploadBody {
        case .inline(let bytes): (bytes, Int64(bytes.count), nil)
        case .stream: (nil, transferSizeUnknown, nil)
        case .blob(let id): (nil, 0, id)  // its size is looked up below
        case nil: (creation.requestBody, Int64(creation.requestBody?.count ?? 0), nil)
        }
        let newTask = NewTask(
            creation: creation, request: request, requestBody: requestBody,
            uploadSource: try JSONColumn.encodeOptional(creation.uploadBody.map(UploadSource.init)),
            bytesToSend: bytesToSend, checkpoint: try JSONColumn.encodeOptional(origin.checkpoint),
            idempotencyKey: origin.idempotencyKey, host: host
        )
        // The common creation is one statement, a transaction of its own: no BEGIN and COMMIT
        // round trips while the session's row is locked.
        guard origin.idempotencyKey != nil || origin.adoptsPartialFileOf != nil || creation.delegate != nil || blobID != nil else {
            let task = try await pool.withConnection { connection in
                try Self.insert([newTask], tenantID: tenantID, sessionID: sessionID, fingerprint: nil, on: connection)[0]
            }
            return (task, true)
        }
        let (tasks, created) = try await createOnce(
            tenantID: tenantID, sessionID: sessionID, keys: origin.idempotencyKey.map { [$0] }, fingerprint: origin.fingerprint
        ) { connection in
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
                    throw StoreError.conflict("resumeData: was already used, or its partial file is no longer kept.", field: "resumeData")
                }
            }
            var task = newTask
            if let blobID {
                // Locked until the task is written: a delete of the blob meanwhile waits for it,
                // then sees the task and refuses (409), instead of leaving it without its body.
                guard let blob = try connection.query(
                    "SELECT size FROM blobs WHERE tenant_id = $1 AND id = $2 FOR KEY SHARE", [tenantID, blobID]
                ).first else {
                    throw StoreError.invalidReference(field: "body.blob", message: "there is no blob \(blobID); upload it with PUT /v1/blobs first.")
                }
                task.bytesToSend = try blob.decode("size", as: Int64.self)
                task.request.httpBodyLength = task.bytesToSend
            }
            let created = try Self.insert([task], tenantID: tenantID, sessionID: sessionID, fingerprint: origin.fingerprint, on: connection)
            if let delegate = creation.delegate {
                try WebhookEndpointRows.attach(delegate, toTask: created[0].id, sessionID: sessionID, tenantID: tenantID, on: connection)
            }
            return created
        }
        return (tasks[0], created)
    }

    /// Runs `create` in a transaction, unless the idempotency keys (one per task) already made
    /// their tasks with the same request: then returns those (`created` false), also when a
    /// request with the same keys raced this one and won.
    func createOnce(
        tenantID: String, sessionID: String, keys: [String]?, fingerprint: [UInt8]?,
        _ create: @escaping @Sendable (PostgresConnection) throws -> [TaskRecord]
    ) async throws -> (tasks: [TaskRecord], created: Bool) {
        do {
            return try await pool.withTransaction { connection in
                if let keys, let existing = try Self.findIdempotent(
                    tenantID: tenantID, sessionID: sessionID, keys: keys, fingerprint: fingerprint, on: connection
                ) {
                    return (existing, false)
                }
                return (try create(connection), true)
            }
        } catch let error where keys != nil && Self.mayHaveLostARace(error) {
            // Two requests with the same keys raced; the other one created the tasks. (Its unique
            // key stopped this one's insert, or, adopting the same resume data, this one found
            // the partial file already taken once the other committed.)
            return try await pool.withConnection { connection in
                guard let keys, let existing = try Self.findIdempotent(
                    tenantID: tenantID, sessionID: sessionID, keys: keys, fingerprint: fingerprint, on: connection
                ) else { throw error }
                return (existing, false)
            }
        }
    }

    private static func mayHaveLostARace(_ error: any Error) -> Bool {
        if let error = error as? PostgresError { return error.isUniqueViolation }
        if case .conflict? = error as? StoreError { return true }
        return false
    }

    /// Inserts tasks (see `NewTask.insert`); refuses when the session is gone or invalidated.
    static func insert(
        _ tasks: [NewTask], tenantID: String, sessionID: String, fingerprint: [UInt8]?, on connection: PostgresConnection
    ) throws -> [TaskRecord] {
        if let created = try NewTask.insert(tasks, tenantID: tenantID, sessionID: sessionID, fingerprint: fingerprint, on: connection) {
            return created
        }
        try SessionExistence.require(tenantID: tenantID, sessionID: sessionID, on: connection)
        throw StoreError.conflict("The session is invalidated and accepts no new tasks.")
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
        var list = ListConditions()
        let session = list.bind(sessionID)
        list.require("tenant_id = \(list.bind(tenantID)) AND session_id = \(session)")
        list.filter(filter.states?.map(\.rawValue)) { "state = ANY(\($0)::text[])" }
        list.filter(filter.kinds?.map(\.rawValue)) { "kind = ANY(\($0)::text[])" }
        list.filter(after) { "task_identifier > (SELECT task_identifier FROM tasks WHERE id = \($0) AND session_id = \(session))" }
        let pageSize = list.bind(limit + 1)
        return try await pool.withConnection { [list] connection in
            try SessionExistence.require(tenantID: tenantID, sessionID: sessionID, on: connection)
            let rows = try connection.query(
                "SELECT \(TaskRow.columns) FROM tasks \(list.whereClause) ORDER BY task_identifier LIMIT \(pageSize)", list.parameters
            )
            try PageCursor.check(after, pageIsEmpty: rows.isEmpty, resource: "task") {
                try !connection.query("SELECT 1 FROM tasks WHERE id = $1 AND session_id = $2 AND tenant_id = $3", [$0, sessionID, tenantID]).isEmpty
            }
            return try Page(rows: rows, limit: limit, decode: TaskRow.decode, cursor: \.id)
        }
    }

    /// A data or upload task's response body, once it has one.
    /// `isRemoved`: `reset` removed the body (it is not merely empty).
    public func responseBody(tenantID: String, taskID: String) async throws -> (task: TaskRecord, body: [UInt8]?, isRemoved: Bool) {
        try await pool.withConnection { connection in
            let task = try TaskRow.find(tenantID: tenantID, taskID: taskID, on: connection)
            let row = try connection.query(
                """
                SELECT b.response_body, t.storage_removed_at IS NOT NULL AS is_removed
                FROM tasks t LEFT JOIN task_bodies b ON b.task_id = t.id WHERE t.id = $1
                """,
                [taskID]
            ).first
            let body = try row?.decode("response_body", as: [UInt8]?.self) ?? nil
            return (task, body, try row?.decode("is_removed", as: Bool.self) ?? false)
        }
    }

    /// Whether `reset` removed the task's stored body or file.
    public func storageWasRemoved(tenantID: String, taskID: String) async throws -> Bool {
        try await pool.withConnection { connection in
            guard let row = try connection.query(
                "SELECT storage_removed_at IS NOT NULL FROM tasks WHERE tenant_id = $1 AND id = $2", [tenantID, taskID]
            ).first else { throw StoreError.notFound(resource: "task") }
            return try row.decode(0, as: Bool.self)
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

    /// The tasks idempotency keys already made, in the keys' order; nil when they made none.
    /// The same keys with another body, in another session, or only some of them made, is
    /// another request under the same key.
    static func findIdempotent(
        tenantID: String, sessionID: String, keys: [String], fingerprint: [UInt8]?, on connection: PostgresConnection
    ) throws -> [TaskRecord]? {
        let rows = try connection.query(
            """
            SELECT \(TaskRow.columns), idempotency_key, idempotency_fingerprint FROM tasks
            WHERE tenant_id = $1 AND idempotency_key = ANY($2)
            """,
            [tenantID, keys]
        )
        guard !rows.isEmpty else { return nil }
        var byKey: [String: TaskRecord] = [:]
        for row in rows {
            guard try row.decode("idempotency_fingerprint", as: [UInt8]?.self) == fingerprint,
                  try row.decode("session_id", as: String.self) == sessionID
            else { throw StoreError.idempotencyKeyReused }
            byKey[try row.decode("idempotency_key")] = try TaskRow.decode(row)
        }
        let tasks = keys.compactMap { byKey[$0] }
        guard tasks.count == keys.count else { throw StoreError.idempotencyKeyReused }
        return tasks
    }
}
