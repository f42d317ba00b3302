import FerryCore
import FerryStore
import Foundation
import Testing

/// Data tasks of one default session, claimed by a transfer ledger: what a LedgerWriter writes
/// about, for its tests without an engine.
struct ClaimedDataTasks {
    let tenantID: String
    /// The tasks' leases, in the order they were created.
    let leases: [LeaseToken]

    static func make(count: Int, tenantName: String, in database: FerryDatabase, claimedBy ledger: TransferLedger) async throws -> ClaimedDataTasks {
        let tenant = try await database.tenants.create(name: tenantName, quotas: TenantQuotas()).tenant
        let session = try await database.sessions.create(tenantID: tenant.id, SessionCreation(configuration: SessionConfiguration(kind: .default))).session
        var created: [String] = []
        for index in 0..<count {
            let request = TransferRequest(url: "https://origin-\(index).example/file.bin")
            var creation = TaskCreation(kind: .data, request: request)
            creation.startsImmediately = true
            created.append(try await database.tasks.create(
                tenantID: tenant.id, sessionID: session.id, creation, request: request, host: "origin-\(index).example", origin: .init()
            ).task.id)
        }
        let claimed = Dictionary(uniqueKeysWithValues: try await ledger.claim(limit: count).map { ($0.taskID, LeaseToken(taskID: $0.taskID, epoch: $0.leaseEpoch)) })
        return ClaimedDataTasks(tenantID: tenant.id, leases: try created.map { try #require(claimed[$0]) })
    }

    /// Whether the task is completed within `limit`.
    func completes(_ taskID: String, within limit: Duration, in database: FerryDatabase) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await database.tasks.find(tenantID: tenantID, id: taskID).state == .completed { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
