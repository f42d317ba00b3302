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
        // Each task keeps the key with its position (a space cannot be part of a client's key),
        // which the unique index guards.
        let keys = idempotencyKey.map { key in items.indices.map { "\(key) \($0)" } }
        let newTasks = items.enumerated().map { index, item in
            NewTask(
                creation: item.creation, request: item.request, requestBody: item.creation.requestBody,
                bytesToSend: Int64(item.creation.requestBody?.count ?? 0), idempotencyKey: keys?[index], host: item.host
            )
        }
        return try await createOnce(tenantID: tenantID, sessionID: sessionID, keys: keys, fingerprint: fingerprint) { connection in
            try Self.insert(newTasks, tenantID: tenantID, sessionID: sessionID, fingerprint: fingerprint, on: connection)
        }
    }
}
