import FerryCore
import Foundation
import Postgres

extension TaskStore {
    /// One task of a batch, validated, with the host its request goes to.
    public struct BatchItem: Sendable {
        public var creation: TaskCreation
        public var request: TransferRequest
        public var host: String

        public init(creation: TaskCreation, request: TransferRequest, host: String) {
            self.creation = creation
            self.request = request
            self.host = host
        }
    }

    /// The most tasks one batch creates.
    public static let maximumBatchSize = 1000

    /// Creates the tasks of a batch in one transaction, in order (their taskIdentifiers follow
    /// each other), all or none. Items carry no upload body, delegate or resume data (the API
    /// sends those through single creations). An idempotency key covers the whole batch: a
    /// retry with the same body returns the tasks the first one made (`created` false).
    public func createBatch(
        tenantID: String, sessionID: String, _ items: [BatchItem], idempotencyKey: String?, fingerprint: [UInt8]?
    ) async throws -> (tasks: [TaskRecord], created: Bool) {
        // Each task keeps the key with its position, which the unique index guards.
        let keys = idempotencyKey.map { key in items.indices.map { "\(key)#\($0)" } }
        do {
            return try await pool.withTransaction { connection in
                if let keys, let existing = try Self.findIdempotentBatch(
                    tenantID: tenantID, sessionID: sessionID, keys: keys, fingerprint: fingerprint, on: connection
                ) {
                    return (existing, false)
                }
                let newTasks = items.enumerated().map { index, item in
                    NewTask(
                        id: IDs.make("tsk"), tenantID: tenantID, sessionID: sessionID, creation: item.creation, request: item.request,
                        uploadSource: nil, bytesToSend: Int64(item.creation.requestBody?.count ?? 0), checkpoint: nil,
                        idempotencyKey: keys?[index], fingerprint: keys == nil ? nil : fingerprint, host: item.host
                    )
                }
                guard let tasks = try NewTask.insert(newTasks, tenantID: tenantID, sessionID: sessionID, on: connection) else {
                    throw try Self.sessionRefusal(tenantID: tenantID, sessionID: sessionID, on: connection)
                }
                for (task, item) in zip(tasks, items) {
                    guard let body = item.creation.requestBody else { continue }
                    try connection.execute("INSERT INTO task_bodies (task_id, request_body) VALUES ($1, $2)", [task.id, body])
                }
                return (tasks, true)
            }
        } catch let error as PostgresError where error.isUniqueViolation && keys != nil {
            // Two requests with the same key raced; the other one created the tasks.
            return try await pool.withConnection { connection in
                guard let keys, let existing = try Self.findIdempotentBatch(
                    tenantID: tenantID, sessionID: sessionID, keys: keys, fingerprint: fingerprint, on: connection
                ) else { throw error }
                return (existing, false)
            }
        }
    }

    /// The tasks a batch's idempotency key already made, in order; nil when it made none.
    private static func findIdempotentBatch(
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
        // A batch of another size under the same key is another request.
        let tasks = keys.compactMap { byKey[$0] }
        guard tasks.count == keys.count else { throw StoreError.idempotencyKeyReused }
        return tasks
    }
}
