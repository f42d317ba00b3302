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
        let ledger = database.transfers(instanceID: "refusals")
        let tasks = try await ClaimedDataTasks.make(count: 2, tenantName: "refusals", in: database, claimedBy: ledger)
        let (refused, written) = (tasks.leases[0], tasks.leases[1])
        let taskIDs = tasks.leases.map(\.taskID)
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
        #expect(try await tasks.completes(written.taskID, within: .seconds(20), in: database), "the writes after the refused one were held up")
        // And the queue goes on after it.
        writer.enqueue(.finish([(refused, .completed(TaskCompletion()))]))
        #expect(try await tasks.completes(refused.taskID, within: .seconds(20), in: database))
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
}
