import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Synchronization
import Testing

@testable import FerryEngine

@Suite("LedgerWriter: the database away for a while")
struct LedgerWriterOutageTests {
    static let retryingLine = "writing transfer state failed; retrying"

    @Test("writes queued meanwhile are written once it is back; the failed tries are logged once", .timeLimit(.minutes(1)))
    func outageIsWaitedOut() async throws {
        let fixture = try await Fixture.make()
        let log = LogRecorder()
        let writer = fixture.writer(logger: log)
        let running = Task { await writer.run() }

        try await fixture.test.beginOutage()
        writer.enqueue(.events([OwnerEvent(lease: fixture.leases[0], type: .taskIsWaitingForConnectivity, data: [:])]))
        writer.enqueue(.finish([(fixture.leases[1], .completed(TaskCompletion(responseBody: Array("done".utf8))))]))
        // Long enough for several tries (each waits up to the pool's 100 ms connect timeout).
        try await Task.sleep(for: .seconds(4))
        #expect(log.count(Self.retryingLine) == 1, "one line per failed try floods the log while an outage lasts")
        // Their tasks are still this instance's business: its reaper leaves their leases alone.
        #expect(Set(writer.tasksWithUnwrittenWrites) == [fixture.leases[0].taskID, fixture.leases[1].taskID])

        try await fixture.test.endOutage()
        #expect(try await fixture.completes(fixture.leases[1].taskID, within: .seconds(10)), "the end written during the outage was lost")
        #expect(await becomesTrue(within: .seconds(5)) { writer.tasksWithUnwrittenWrites.isEmpty })
        #expect(try await fixture.eventTypes(of: fixture.leases[0].taskID).contains("task.isWaitingForConnectivity"))
        #expect(log.count("writing transfer state succeeded again") == 1)
        writer.stop()
        await running.value
        await fixture.test.close()
    }

    @Test("a writer cancelled meanwhile ends at once, and the reaper takes its task back", .timeLimit(.minutes(1)))
    func cancelledWriterEnds() async throws {
        let fixture = try await Fixture.make()
        let log = LogRecorder()
        let writer = fixture.writer(logger: log)
        let (running, ended) = try await fixture.runThroughOutage(writer)
        try await Task.sleep(for: .milliseconds(300))
        running.cancel()
        // A cancelled sleep returns at once: the writer used to try again and again, without a
        // pause, for as long as the database stayed away.
        #expect(await becomesTrue(within: .seconds(3)) { ended.value }, "the cancelled writer did not end")
        #expect(log.count(Self.retryingLine) <= 1, "\(log.count(Self.retryingLine)) lines of failed tries")

        try await fixture.test.endOutage()
        await running.value
        try await fixture.expectTakenBack(fixture.leases[1].taskID)
        await fixture.test.close()
    }

    @Test("a writer stopped meanwhile ends once its patience has run out", .timeLimit(.minutes(1)))
    func stoppedWriterEnds() async throws {
        let fixture = try await Fixture.make()
        let log = LogRecorder()
        let writer = fixture.writer(logger: log, patienceWhenStopping: .milliseconds(500))
        let (running, ended) = try await fixture.runThroughOutage(writer)
        writer.stop()
        #expect(await becomesTrue(within: .seconds(3)) { ended.value }, "the stopped writer did not end")
        #expect(log.all.contains { $0.message.hasPrefix("the database stayed away while stopping") })

        try await fixture.test.endOutage()
        await running.value
        try await fixture.expectTakenBack(fixture.leases[1].taskID)
        await fixture.test.close()
    }

    @Test("a shutdown's deadline, set as it starts, ends failing writes before the patience would", .timeLimit(.minutes(1)))
    func shutdownDeadlineComesFirst() async throws {
        let fixture = try await Fixture.make()
        let log = LogRecorder()
        let writer = fixture.writer(logger: log, patienceWhenStopping: .seconds(30))
        let (running, ended) = try await fixture.runThroughOutage(writer)
        writer.giveUpFailingWrites(at: .now + .milliseconds(300))
        // Given up at the deadline, before `stop()`: the writer refuses writes from then on.
        #expect(await becomesTrue(within: .seconds(3)) { writer.refusesWrites }, "the failing write was not given up")
        writer.stop()
        #expect(await becomesTrue(within: .seconds(3)) { ended.value }, "the stopped writer waited out its patience")
        #expect(log.all.contains { $0.message.hasPrefix("the database stayed away while stopping") })

        try await fixture.test.endOutage()
        await running.value
        try await fixture.expectTakenBack(fixture.leases[1].taskID)
        await fixture.test.close()
    }

    @Test("a write that first fails after the shutdown's deadline still gets the writer's patience", .timeLimit(.minutes(1)))
    func lateWriteGetsPatience() async throws {
        let fixture = try await Fixture.make()
        let log = LogRecorder()
        let writer = fixture.writer(logger: log, patienceWhenStopping: .seconds(30))
        // The grace period is over; the writer was idle, so nothing was given up.
        writer.giveUpFailingWrites(at: .now)
        let (running, _) = try await fixture.runThroughOutage(writer)
        try await Task.sleep(for: .seconds(1))
        #expect(!writer.refusesWrites, "a late write was given up at its first failure")
        try await fixture.test.endOutage()
        #expect(try await fixture.completes(fixture.leases[1].taskID, within: .seconds(10)), "the late end was lost")
        writer.stop()
        await running.value
        await fixture.test.close()
    }

}

/// Set once a writer's `run()` has returned.
private final class EndFlag: Sendable {
    private let ended = Atomic<Bool>(false)
    var value: Bool { ended.load(ordering: .acquiring) }
    func set() { ended.store(true, ordering: .releasing) }
}

/// Two claimed data tasks of a default session, in a database whose pool waits 100 ms for a
/// connection while the database is away; their leases last 1 s.
private struct Fixture {
    let test: TestDatabase
    let tasks: ClaimedDataTasks
    let ledger: TransferLedger
    let resumeData: ResumeDataIssuer

    var tenantID: String { tasks.tenantID }
    var leases: [LeaseToken] { tasks.leases }

    static func make() async throws -> Fixture {
        let test = try await TestDatabase.make(poolSize: 2, connectTimeout: .milliseconds(100))
        let database = test.database
        let ledger = database.transfers(instanceID: "outage", leaseDuration: .seconds(1))
        let tasks = try await ClaimedDataTasks.make(count: 2, tenantName: "outage", in: database, claimedBy: ledger)
        let resumeData = ResumeDataIssuer(signingKey: try await database.settings.resumeDataSigningKey())
        return Fixture(test: test, tasks: tasks, ledger: ledger, resumeData: resumeData)
    }

    func writer(logger log: LogRecorder, patienceWhenStopping: Duration = .seconds(5)) -> LedgerWriter {
        LedgerWriter(
            ledger: ledger, cookies: test.database.cookies, workers: 1, version: "test", logger: log.logger,
            resumeData: resumeData, patienceWhenStopping: patienceWhenStopping, finished: {}
        )
    }

    /// Starts `writer` in a task of its own, then takes the database away and queues the second
    /// task's end meanwhile.
    func runThroughOutage(_ writer: LedgerWriter) async throws -> (running: Task<Void, Never>, ended: EndFlag) {
        let ended = EndFlag()
        let running = Task {
            await writer.run()
            ended.set()
        }
        try await test.beginOutage()
        writer.enqueue(.finish([(leases[1], .completed(TaskCompletion()))]))
        return (running, ended)
    }

    /// Whether the task is completed within `limit`.
    func completes(_ taskID: String, within limit: Duration) async throws -> Bool {
        try await tasks.completes(taskID, within: limit, in: test.database)
    }

    func eventTypes(of taskID: String) async throws -> [String] {
        try await test.database.pool.withConnection { connection in
            try connection.query("SELECT type FROM events WHERE task_id = $1 ORDER BY position", [taskID]).map { try $0.decode("type", as: String.self) }
        }
    }

    /// A given-up end is not lost: once the lease has lapsed, another instance's reaper
    /// completes the task (a default session's, with -1005), as after a kill.
    func expectTakenBack(_ taskID: String) async throws {
        try await Task.sleep(for: .milliseconds(1200))
        try await test.database.transfers(instanceID: "another").reapExpiredLeases(resumeData: resumeData, holding: [])
        let task = try await test.database.tasks.find(tenantID: tenantID, id: taskID)
        #expect(task.state == .completed)
        #expect(try await eventTypes(of: taskID).contains("task.didCompleteWithError"))
    }
}
