import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

@testable import FerryEngine

@Suite("LedgerWriter: a write the database refuses is set aside, not retried for ever")
struct LedgerWriterRefusalTests {
    @Test("the other writes of its transaction, and those after it, are written", .timeLimit(.minutes(1)))
    func refusedWriteIsSetAside() async throws {
        let test = try await TestDatabase.make(poolSize: 4)
        let database = test.database
        let tenant = try await database.tenants.create(name: "refusals", quotas: TenantQuotas()).tenant
        let session = try await database.sessions.create(tenantID: tenant.id, SessionCreation(configuration: SessionConfiguration(kind: .default))).session
        var created: [String] = []
        for index in 0..<2 {
            let request = TransferRequest(url: "https://origin-\(index).example/file.bin")
            var creation = TaskCreation(kind: .data, request: request)
            creation.startsImmediately = true
            created.append(try await database.tasks.create(
                tenantID: tenant.id, sessionID: session.id, creation, request: request, host: "origin-\(index).example", origin: .init()
            ).task.id)
        }
        let taskIDs = created
        let ledger = database.transfers(instanceID: "refusals")
        let leases = Dictionary(uniqueKeysWithValues: try await ledger.claim(limit: 10).map { ($0.taskID, LeaseToken(taskID: $0.taskID, epoch: $0.leaseEpoch)) })
        let (refused, written) = (try #require(leases[taskIDs[0]]), try #require(leases[taskIDs[1]]))
        let writer = LedgerWriter(
            ledger: ledger, cookies: database.cookies, workers: 1, version: "test", logger: quietLogger,
            resumeData: ResumeDataIssuer(signingKey: try await database.settings.resumeDataSigningKey()), finished: {}
        )
        let running = Task { await writer.run() }

        // jsonb refuses the NUL character (SQLSTATE 22P05) whenever it is sent. Queued together,
        // the three writes share one transaction, which is refused as a whole.
        writer.enqueue(.events([OwnerEvent(lease: refused, type: .taskIsWaitingForConnectivity, data: ["text": "a\u{0}b"])]))
        writer.enqueue(.events([OwnerEvent(lease: written, type: .taskIsWaitingForConnectivity, data: [:])]))
        writer.enqueue(.finish([(written, .completed(TaskCompletion(responseBody: Array("done".utf8))))]))
        #expect(try await Self.completes(written.taskID, tenantID: tenant.id, in: database), "the writes after the refused one were held up")
        // And the queue goes on after it.
        writer.enqueue(.finish([(refused, .completed(TaskCompletion()))]))
        #expect(try await Self.completes(refused.taskID, tenantID: tenant.id, in: database))
        writer.stop()
        await running.value

        let types = try await database.pool.withConnection { connection in
            try connection.query("SELECT task_id, type FROM events WHERE task_id = ANY($1) ORDER BY position", [taskIDs]).map {
                "\(try $0.decode("task_id", as: String.self) == refused.taskID ? "refused" : "written") \(try $0.decode("type", as: String.self))"
            }
        }
        #expect(!types.contains("refused task.isWaitingForConnectivity"), "the refused event was written: \(types)")
        #expect(types.contains("written task.isWaitingForConnectivity"), "\(types)")
        #expect(types.contains("written task.didCompleteWithError"), "\(types)")
        await test.close()
    }

    /// Whether the task is completed within 20 s (a refused write used to be retried for ever).
    private static func completes(_ taskID: String, tenantID: String, in database: FerryDatabase) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if try await database.tasks.find(tenantID: tenantID, id: taskID).state == .completed { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
