import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Glibc
import Postgres
import Testing

@Suite("TransferLedger.reapExpiredLeases and invalidating sessions")
struct ReaperSessionLockTests {
    @Test("it locks their sessions in id order, as `finish` does: the two do not deadlock", .timeLimit(.minutes(1)))
    func sessionsLockedInIDOrder() async throws {
        try await StoreFixture.with { fixture in
            var sessions = [try await fixture.makeSession(), try await fixture.makeSession()]
            sessions.sort { $0.id < $1.id }
            let (first, second) = (sessions[0], sessions[1])
            // The reaper meets the second session's task first: its lease lapsed earlier.
            let early = try await fixture.makeTask(session: second)
            let late = try await fixture.makeTask(session: first)
            let survivor = try await fixture.makeTask(session: second)
            _ = try await fixture.ledger("dead-instance").claim(limit: 10)
            try await fixture.execute("UPDATE tasks SET lease_expires_at = now() - interval '2 seconds' WHERE id = $1", [early.id])
            try await fixture.execute("UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [late.id])
            for session in sessions {
                _ = try await fixture.database.sessions.invalidate(
                    tenantID: fixture.tenant.id, sessionID: session.id, .finishTasks, resumeData: fixture.resumeData
                )
            }
            // An owner's `finish` ending tasks of both sessions locks them as this transaction does
            // (`SessionInvalidation.finishIfLastTasks`: in id order), here slowed down between the
            // two so that the reaper runs in between.
            let finisher = PostgresPool(configuration: .init(conninfo: fixture.test.conninfo, size: 1), logger: quietLogger)
            let (lockedFirst, lockingFirst) = AsyncStream<Void>.makeStream()
            let (firstID, secondID) = (first.id, second.id)
            let finishing = Task {
                try await finisher.withTransaction { connection in
                    try connection.execute("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [firstID])
                    lockingFirst.yield()
                    // On the pool's own thread. Longer than deadlock_timeout (1 s): PostgreSQL
                    // has looked for a deadlock by the time the cycle closes.
                    usleep(1_500_000)
                    try connection.execute("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [secondID])
                }
            }
            for await _ in lockedFirst { break }

            // Before: the reaper locked the second session for the early task, then waited for
            // the first; the finisher, holding the first, waited for the second. PostgreSQL
            // broke the cycle by failing one of them (40P01).
            let reaper = fixture.ledger("reaper")
            let resumeData = fixture.resumeData
            let reaped = await Task { try await reaper.reapExpiredLeases(resumeData: resumeData, holding: []) }.result
            let finished = await finishing.result
            await finisher.close()
            #expect(throws: Never.self, "the reaper failed") { try reaped.get() }
            #expect(throws: Never.self, "the finisher failed") { try finished.get() }
            #expect((try? reaped.get()) == 2)

            // And the reaper's work is whole: the first session's last task ended, so it is
            // invalidated (its last message); the second still waits for the survivor.
            for task in [early, late] {
                #expect(try await fixture.eventTypes(of: task.id).last == "task.didCompleteWithError")
            }
            #expect(try await Self.state(of: first.id, fixture) == "invalidated")
            #expect(try await Self.state(of: second.id, fixture) == "finishing")
            #expect(try await Self.sessionEvents(of: first.id, fixture) == ["session.didBecomeInvalidWithError"])
            #expect(try await Self.sessionEvents(of: second.id, fixture) == [])
            #expect(try await fixture.column("state", of: survivor.id, as: String.self) == "running")
        }
    }

    @Test("tasks of several invalidating sessions, reaped together, each end their session once", .timeLimit(.minutes(1)))
    func severalSessionsInvalidated() async throws {
        try await StoreFixture.with { fixture in
            var sessions: [SessionRecord] = []
            var tasks: [TaskRecord] = []
            for _ in 0..<4 {
                let session = try await fixture.makeSession()
                sessions.append(session)
                for _ in 0..<3 { tasks.append(try await fixture.makeTask(session: session)) }
            }
            _ = try await fixture.ledger("dead-instance").claim(limit: 100)
            // Lapsed in an order that mixes the sessions.
            for (index, task) in tasks.shuffled().enumerated() {
                try await fixture.execute(
                    "UPDATE tasks SET lease_expires_at = now() - make_interval(secs => $2) WHERE id = $1", [task.id, Double(index + 1)]
                )
            }
            for session in sessions {
                _ = try await fixture.database.sessions.invalidate(
                    tenantID: fixture.tenant.id, sessionID: session.id, .finishTasks, resumeData: fixture.resumeData
                )
            }
            #expect(try await fixture.ledger("reaper").reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == tasks.count)
            for session in sessions {
                #expect(try await Self.state(of: session.id, fixture) == "invalidated")
                #expect(try await Self.sessionEvents(of: session.id, fixture) == ["session.didBecomeInvalidWithError"])
                // The session's message comes after its tasks' last ones.
                let lastTaskEvent: Int64 = try await fixture.value(
                    "SELECT max(position) FROM events WHERE session_id = $1 AND task_id IS NOT NULL", [session.id]
                )
                let sessionEvent: Int64 = try await fixture.value(
                    "SELECT position FROM events WHERE session_id = $1 AND task_id IS NULL", [session.id]
                )
                #expect(sessionEvent > lastTaskEvent)
            }
            for task in tasks {
                let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
                #expect(stored.error?.code == URLErrorCode.networkConnectionLost.rawValue)
            }
        }
    }

    private static func state(of sessionID: String, _ fixture: StoreFixture) async throws -> String {
        try await fixture.value("SELECT state FROM sessions WHERE id = $1", [sessionID])
    }

    private static func sessionEvents(of sessionID: String, _ fixture: StoreFixture) async throws -> [String] {
        try await fixture.rows("SELECT type FROM events WHERE session_id = $1 AND task_id IS NULL ORDER BY position", [sessionID]).map { try $0.decode(0) }
    }
}
