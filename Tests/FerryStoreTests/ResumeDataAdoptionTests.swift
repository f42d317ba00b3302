import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Resume data: a new task adopts the partial file of the task it continues, once")
struct ResumeDataAdoptionTests {
    /// A completed download that kept its partial file, as cancelByProducingResumeData leaves it.
    private func cancelledDownload(_ fixture: StoreFixture, tenantID: String? = nil, session: SessionRecord? = nil) async throws -> (TaskRecord, TransferCheckpoint) {
        let task = try await fixture.makeTask(starts: false, session: session, tenantID: tenantID)
        let checkpoint = StoreFixture.checkpoint(taskID: task.id)
        try await fixture.execute(
            "UPDATE tasks SET state = 'completed', completed_at = now(), checkpoint = $2 WHERE id = $1",
            [task.id, PostgresJSONFactory.json(checkpoint)]
        )
        return (task, checkpoint)
    }

    @Test("the first adoption moves the checkpoint to the new task; a second one is a conflict")
    func adoptsOnce() async throws {
        try await StoreFixture.with { fixture in
            let (previous, checkpoint) = try await cancelledDownload(fixture)
            let origin = TaskStore.Origin(checkpoint: checkpoint, adoptsPartialFileOf: previous.id)

            let adopter = try await fixture.makeTask(origin: origin)
            #expect(try await fixture.column("checkpoint IS NULL", of: previous.id, as: Bool.self))
            let moved = try await fixture.column("checkpoint", of: adopter.id, as: PostgresJSONFactory.Column.self)
            #expect(try PostgresJSONFactory.decode(TransferCheckpoint.self, from: moved) == checkpoint)

            await expectConflict { try await fixture.makeTask(origin: origin) }
            #expect(try await fixture.value("SELECT count(*) FROM tasks", as: Int.self) == 2)
        }
    }

    @Test("concurrent adoptions of one resume data: exactly one succeeds")
    func adoptsOnceUnderConcurrency() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            let (previous, checkpoint) = try await cancelledDownload(fixture)
            let origin = TaskStore.Origin(checkpoint: checkpoint, adoptsPartialFileOf: previous.id)
            let outcomes = await withTaskGroup(of: Bool?.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        do { _ = try await fixture.makeTask(origin: origin); return true } catch { return isConflict(error) ? false : nil }
                    }
                }
                return await group.reduce(into: [Bool?]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == true }.count == 1)
            #expect(outcomes.filter { $0 == false }.count == 5)
        }
    }

    @Test("resume data naming another tenant's task, a running task, or another partial file is refused")
    func refusesForeignOrStale() async throws {
        try await StoreFixture.with { fixture in
            let other = try await fixture.makeTenant()
            let theirSession = try await fixture.makeSession(tenantID: other.id)
            let (theirs, theirCheckpoint) = try await cancelledDownload(fixture, tenantID: other.id, session: theirSession)
            await expectConflict {
                try await fixture.makeTask(origin: TaskStore.Origin(checkpoint: theirCheckpoint, adoptsPartialFileOf: theirs.id))
            }
            #expect(try await fixture.column("checkpoint IS NOT NULL", of: theirs.id, as: Bool.self))

            let (mine, checkpoint) = try await cancelledDownload(fixture)
            var otherFile = checkpoint
            otherFile.partialFile = "tsk_someone_else.part"
            await expectConflict {
                try await fixture.makeTask(origin: TaskStore.Origin(checkpoint: otherFile, adoptsPartialFileOf: mine.id))
            }

            try await fixture.execute("UPDATE tasks SET state = 'running' WHERE id = $1", [mine.id])
            await expectConflict {
                try await fixture.makeTask(origin: TaskStore.Origin(checkpoint: checkpoint, adoptsPartialFileOf: mine.id))
            }
            #expect(try await fixture.column("checkpoint IS NOT NULL", of: mine.id, as: Bool.self))
        }
    }
}
