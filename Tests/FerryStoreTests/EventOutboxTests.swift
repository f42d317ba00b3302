import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

@Suite("Event outbox: gapless per-task sequences, written only with their transaction")
struct EventOutboxTests {
    private func progress(_ lease: LeaseToken, bytes: Int64) -> TransferProgress {
        TransferProgress(
            lease: lease, bytesReceived: bytes, bytesSent: 0, bytesExpectedToReceive: 1_000_000, bytesExpectedToSend: 0,
            progressEvent: (.downloadTaskDidWriteData, ["totalBytesWritten": .number(Double(bytes))])
        )
    }

    @Test("concurrent record batches and heartbeat progress events number one task's events 1…N without gaps or repeats")
    func gaplessUnderConcurrentWriters() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            let ledger = fixture.ledger()
            let task = try await fixture.makeTask()
            let claim = try await fixture.claim(task.id, with: ledger)
            let lease = LeaseToken(taskID: task.id, epoch: claim.leaseEpoch)
            let batches = 24, perBatch = 5, heartbeats = 24

            try await withThrowingTaskGroup(of: Void.self) { group in
                for batch in 0..<batches {
                    group.addTask {
                        let events = (0..<perBatch).map { index in
                            OwnerEvent(lease: lease, type: .dataTaskDidReceiveData, data: ["batch": .number(Double(batch)), "index": .number(Double(index))])
                        }
                        try await ledger.record(events)
                    }
                }
                for beat in 0..<heartbeats {
                    group.addTask {
                        let result = try await ledger.heartbeat([progress(lease, bytes: Int64(beat))], workers: 1, version: "test")
                        #expect(result.lost.isEmpty)
                    }
                }
                try await group.waitForAll()
            }

            let total = 1 + batches * perBatch + heartbeats
            #expect(try await fixture.eventSequences(of: task.id) == (1...total).map(Int64.init))
            // Each batch's events stay consecutive and in order.
            let rows = try await fixture.rows(
                "SELECT (data->>'batch')::int, (data->>'index')::int, sequence FROM events WHERE task_id = $1 AND type = 'dataTask.didReceiveData' ORDER BY sequence",
                [task.id]
            )
            var byBatch: [Int: [(index: Int, sequence: Int64)]] = [:]
            for row in rows { byBatch[try row.decode(0), default: []].append((try row.decode(1), try row.decode(2))) }
            for (batch, events) in byBatch {
                #expect(events.map(\.index) == Array(0..<perBatch), "batch \(batch)")
                let span = (events.last?.sequence ?? 0) - (events.first?.sequence ?? 0)
                #expect(span == Int64(perBatch - 1), "batch \(batch) was interleaved")
            }
            // The payload carries the sequence the row has.
            #expect(try await fixture.value("SELECT count(*) FROM events WHERE task_id = $1 AND (data->>'sequence')::bigint <> sequence", [task.id], as: Int.self) == 0)
        }
    }

    @Test("events of two tasks written concurrently each count from 1")
    func perTaskSequences() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            let ledger = fixture.ledger()
            let first = try await fixture.makeTask()
            let second = try await fixture.makeTask()
            let claims = try await ledger.claim(limit: 10)
            #expect(claims.count == 2)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for round in 0..<10 {
                    for claim in claims {
                        group.addTask {
                            let lease = LeaseToken(taskID: claim.taskID, epoch: claim.leaseEpoch)
                            try await ledger.record([OwnerEvent(lease: lease, type: .downloadTaskDidResumeAtOffset, data: ["round": .number(Double(round))])])
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await fixture.eventSequences(of: first.id) == Array(1...11))
            #expect(try await fixture.eventSequences(of: second.id) == Array(1...11))
        }
    }

    @Test("an event appended in a transaction that rolls back leaves nothing, and the sequence has no gap")
    func rolledBackEventLeavesNothing() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            let ref = EventWriter.TaskRef(tenantID: fixture.tenant.id, sessionID: fixture.session.id, taskID: task.id)
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await fixture.pool.withTransaction { connection in
                    var batch = EventBatch()
                    batch.append(.taskDidSendBodyData, for: ref, data: [:])
                    try batch.flush(on: connection)
                    try EventWriter.appendSessionEvent(.sessionDidFinishEvents, tenantID: ref.tenantID, sessionID: ref.sessionID, data: [:], on: connection)
                    throw Abort()
                }
            }
            #expect(try await fixture.eventTypes(of: task.id) == ["task.didCreateTask"])
            #expect(try await fixture.value("SELECT count(*) FROM events WHERE task_id IS NULL", as: Int.self) == 0)
            try await fixture.pool.withTransaction { connection in
                var batch = EventBatch()
                batch.append(.taskDidSendBodyData, for: ref, data: [:])
                try batch.flush(on: connection)
            }
            #expect(try await fixture.eventSequences(of: task.id) == [1, 2])
        }
    }

    @Test("a batch of several tasks' events keeps each task's order, in sequences and in the log, and notifies once")
    func batchKeepsOrder() async throws {
        try await StoreFixture.with { fixture in
            let first = try await fixture.makeTask()
            let second = try await fixture.makeTask()
            let firstRef = EventWriter.TaskRef(tenantID: fixture.tenant.id, sessionID: fixture.session.id, taskID: first.id)
            let secondRef = EventWriter.TaskRef(tenantID: fixture.tenant.id, sessionID: fixture.session.id, taskID: second.id)
            try await NotificationRecorder.with(conninfo: fixture.test.conninfo, channels: [NotificationChannel.events]) { recorder in
                try await fixture.pool.withTransaction { connection in
                    var batch = EventBatch()
                    batch.append(.dataTaskDidReceiveResponse, for: firstRef, data: ["n": 1], decidedBy: "default")
                    batch.append(.taskDidSendBodyData, for: secondRef, data: ["n": 2])
                    batch.append(.dataTaskDidReceiveData, for: firstRef, data: ["n": 3])
                    batch.append(.taskDidCompleteWithError, for: secondRef, data: ["n": 4])
                    batch.append(.taskDidCompleteWithError, for: firstRef, data: ["n": 5])
                    try batch.flush(on: connection)
                    #expect(batch.isEmpty)
                    try batch.flush(on: connection)  // empty: writes nothing
                }
                #expect(await recorder.waitForPayload(on: NotificationChannel.events) { $0 == fixture.tenant.id } != nil)
                try await Task.sleep(for: .milliseconds(100))
                #expect(recorder.payloads(on: NotificationChannel.events) == [fixture.tenant.id])
            }
            #expect(try await fixture.eventSequences(of: first.id) == [1, 2, 3, 4])
            #expect(try await fixture.eventSequences(of: second.id) == [1, 2, 3])
            let log = try await fixture.pool.withConnection { connection in
                try connection.query(
                    """
                    SELECT (data->>'n')::int AS n, (data->>'sequence')::int AS sequence, data->>'taskId' AS task, decided_by
                    FROM events WHERE type <> 'task.didCreateTask' ORDER BY position
                    """
                ).map { row in
                    "\(try row.decode("n", as: Int.self)) \(try row.decode("sequence", as: Int.self)) "
                        + "\(try row.decode("task", as: String.self) == first.id ? "first" : "second") \(try row.decode("decided_by", as: String?.self) ?? "-")"
                }
            }
            #expect(log == ["1 2 first default", "2 2 second -", "3 3 first -", "4 3 second -", "5 4 first -"])
        }
    }

    @Test("a task creation whose commit fails leaves neither task nor event")
    func failedCommitLeavesNothing() async throws {
        try await StoreFixture.with { fixture in
            // A deferred constraint trigger fails the transaction at COMMIT, after everything was appended.
            try await fixture.pool.withConnection { connection in
                try connection.executeScript("""
                    CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'refused at commit'; END $$;
                    CREATE CONSTRAINT TRIGGER refuse_commit AFTER INSERT ON events
                        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit();
                    """)
            }
            try await NotificationRecorder.with(conninfo: fixture.test.conninfo, channels: [NotificationChannel.work, NotificationChannel.events]) { recorder in
                await #expect(throws: PostgresError.self) { try await fixture.makeTask() }
                #expect(try await fixture.value("SELECT count(*) FROM tasks", as: Int.self) == 0)
                #expect(try await fixture.value("SELECT count(*) FROM events", as: Int.self) == 0)
                #expect(try await fixture.value("SELECT next_task_identifier FROM sessions WHERE id = $1", [fixture.session.id], as: Int.self) == 1)
                try await Task.sleep(for: .milliseconds(200))
                #expect(recorder.payloads(on: NotificationChannel.work).isEmpty)
                #expect(recorder.payloads(on: NotificationChannel.events).isEmpty)
            }
        }
    }
}
