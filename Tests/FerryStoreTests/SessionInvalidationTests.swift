import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Session invalidation: the last task to end invalidates a finishing session")
struct SessionInvalidationTests {
    /// Holds each task completion's transaction half a second at COMMIT (after its session check).
    private static func holdCompletionsAtCommit(_ fixture: StoreFixture) async throws {
        try await fixture.pool.withConnection { connection in
            try connection.executeScript("""
                CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.type = 'task.didCompleteWithError' THEN PERFORM pg_sleep(0.5); END IF;
                    RETURN NEW;
                END $$;
                CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON events
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();
                """)
        }
    }

    @Test("cancelling the last task of a finishing session invalidates it, with didBecomeInvalidWithError")
    func lastTaskInvalidatesSession() async throws {
        try await StoreFixture.with { fixture in
            let first = try await fixture.makeTask(starts: false)
            let second = try await fixture.makeTask(starts: false)
            try await fixture.execute("UPDATE sessions SET state = 'finishing' WHERE id = $1", [fixture.session.id])
            _ = try await fixture.tasks.apply(.cancel, tenantID: fixture.tenant.id, taskID: first.id, resumeData: fixture.resumeData)
            #expect(try await fixture.database.sessions.find(tenantID: fixture.tenant.id, id: fixture.session.id).state == .finishing)
            _ = try await fixture.tasks.apply(.cancel, tenantID: fixture.tenant.id, taskID: second.id, resumeData: fixture.resumeData)
            let session = try await fixture.database.sessions.find(tenantID: fixture.tenant.id, id: fixture.session.id)
            #expect(session.state == .invalidated)
            #expect(session.invalidatedAt != nil)
            let types = try await fixture.rows("SELECT type FROM events WHERE task_id IS NULL AND session_id = $1", [fixture.session.id])
                .map { try $0.decode(0, as: String.self) }
            #expect(types == ["session.didBecomeInvalidWithError"])
        }
    }

    @Test("two last tasks of a finishing session completing at the same time still invalidate it")
    func lastTasksCompletingTogether() async throws {
        try await StoreFixture.with(poolSize: 4) { fixture in
            let first = try await fixture.makeTask(starts: false)
            let second = try await fixture.makeTask(starts: false)
            try await fixture.execute("UPDATE sessions SET state = 'finishing' WHERE id = $1", [fixture.session.id])
            // The two completions overlap.
            try await Self.holdCompletionsAtCommit(fixture)
            let tasks = fixture.tasks, tenantID = fixture.tenant.id, resumeData = fixture.resumeData
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in [first, second] {
                    group.addTask { _ = try await tasks.apply(.cancel, tenantID: tenantID, taskID: task.id, resumeData: resumeData) }
                }
                try await group.waitForAll()
            }
            #expect(try await fixture.tasks.find(tenantID: tenantID, id: first.id).state == .completed)
            #expect(try await fixture.tasks.find(tenantID: tenantID, id: second.id).state == .completed)
            let session = try await fixture.database.sessions.find(tenantID: tenantID, id: fixture.session.id)
            #expect(session.state == .invalidated)
        }
    }

    @Test("finishTasksAndInvalidate while the last task completes: the session is invalidated all the same")
    func invalidatedWhileTheLastTaskCompletes() async throws {
        try await StoreFixture.with(poolSize: 4) { fixture in
            let task = try await fixture.makeTask(starts: false)
            // The completion commits after it checked its (still valid) session.
            try await Self.holdCompletionsAtCommit(fixture)
            let (tasks, sessions, tenantID, sessionID, resumeData) = (fixture.tasks, fixture.database.sessions, fixture.tenant.id, fixture.session.id, fixture.resumeData)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { _ = try await tasks.apply(.cancel, tenantID: tenantID, taskID: task.id, resumeData: resumeData) }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(200))
                    _ = try await sessions.invalidate(tenantID: tenantID, sessionID: sessionID, .finishTasks, resumeData: resumeData)
                }
                try await group.waitForAll()
            }
            #expect(try await sessions.find(tenantID: tenantID, id: sessionID).state == .invalidated)
        }
    }

    @Test("invalidateAndCancel after finishTasksAndInvalidate cancels what is outstanding")
    func cancelAfterFinish() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask(starts: false)
            let (sessions, tenantID, sessionID) = (fixture.database.sessions, fixture.tenant.id, fixture.session.id)
            #expect(try await sessions.invalidate(tenantID: tenantID, sessionID: sessionID, .finishTasks, resumeData: fixture.resumeData).state == .finishing)
            #expect(try await sessions.invalidate(tenantID: tenantID, sessionID: sessionID, .cancelTasks, resumeData: fixture.resumeData).state == .invalidated)
            let cancelled = try await fixture.tasks.find(tenantID: tenantID, id: task.id)
            #expect(cancelled.state == .completed)
            #expect(cancelled.error?.code == URLErrorCode.cancelled.rawValue)
            // Called again, nothing changes.
            #expect(try await sessions.invalidate(tenantID: tenantID, sessionID: sessionID, .cancelTasks, resumeData: fixture.resumeData).state == .invalidated)
        }
    }
}
