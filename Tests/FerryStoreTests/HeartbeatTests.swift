import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

@Suite("TransferLedger.heartbeat: renews only held leases and records progress")
struct HeartbeatTests {
    private func progress(
        _ lease: LeaseToken, received: Int64 = 0, checkpoint: TransferCheckpoint? = nil, response: HTTPResponseSnapshot? = nil,
        currentRequest: TransferRequest? = nil, event: (type: EventType, data: [String: JSONValue])? = nil
    ) -> TransferProgress {
        TransferProgress(
            lease: lease, bytesReceived: received, bytesSent: 5, bytesExpectedToReceive: 10_000, bytesExpectedToSend: 6,
            checkpoint: checkpoint, response: response, currentRequest: currentRequest, progressEvent: event
        )
    }

    private func secondsLeft(_ fixture: StoreFixture, _ taskID: String) async throws -> Double {
        try await fixture.column("extract(epoch FROM lease_expires_at - now())::float8", of: taskID, as: Double.self)
    }

    @Test("the owner's heartbeat renews its lease and writes progress, checkpoint, response and currentRequest")
    func renewsAndWrites() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger(lease: .seconds(20))
            let task = try await fixture.makeTask()
            let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch)
            try await fixture.execute("UPDATE tasks SET lease_expires_at = now() + interval '1 second' WHERE id = $1", [task.id])

            let checkpoint = StoreFixture.checkpoint(taskID: task.id, bytes: 2048)
            let response = HTTPResponseSnapshot(url: "https://cdn.example/file.bin", head: ResponseHead(statusCode: 200, fields: [("ETag", "\"v1\"")]))
            let redirected = TransferRequest(url: "https://cdn.example/file.bin")
            let result = try await ledger.heartbeat(
                [progress(lease, received: 2048, checkpoint: checkpoint, response: response, currentRequest: redirected)], workers: 3, version: "1.2.3"
            )
            #expect(result.lost.isEmpty)
            #expect(result.stopRequests.isEmpty)
            #expect(try await secondsLeft(fixture, task.id) > 15)

            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(stored.countOfBytesReceived == 2048)
            #expect(stored.countOfBytesSent == 5)
            #expect(stored.countOfBytesExpectedToReceive == 10_000)
            #expect(stored.countOfBytesExpectedToSend == 6)
            #expect(stored.response == response)
            #expect(stored.currentRequest == redirected)
            let json = try await fixture.column("checkpoint", of: task.id, as: PostgresJSON.self)
            #expect(try PostgresJSONFactory.decode(TransferCheckpoint.self, from: json) == checkpoint)

            // A later heartbeat without a new checkpoint or response keeps the last ones.
            _ = try await ledger.heartbeat([progress(lease, received: 4096)], workers: 3, version: "1.2.3")
            let later = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(later.countOfBytesReceived == 4096)
            #expect(later.response == response)
            #expect(later.currentRequest == redirected)
            #expect(try await fixture.column("checkpoint IS NOT NULL", of: task.id, as: Bool.self))

            let instance = try await fixture.rows("SELECT workers, running_transfers, version FROM instances WHERE id = $1", [ledger.instanceID])
            #expect(try instance.first?.decode(0, as: Int.self) == 3)
            #expect(try instance.first?.decode(1, as: Int.self) == 1)
            #expect(try instance.first?.decode(2, as: String.self) == "1.2.3")
        }
    }

    @Test("a wrong epoch, another instance's lease or a finished task is reported lost and nothing is written")
    func reportsLost() async throws {
        try await StoreFixture.with { fixture in
            let mine = fixture.ledger("instance-a")
            let theirs = fixture.ledger("instance-b")
            let held = try await fixture.makeTask()
            let stolen = try await fixture.makeTask()
            let finished = try await fixture.makeTask()
            let claims = try await mine.claim(limit: 10)
            #expect(claims.count == 3)
            let leases = Dictionary(uniqueKeysWithValues: claims.map { ($0.taskID, LeaseToken(taskID: $0.taskID, epoch: $0.leaseEpoch)) })
            let heldLease = try #require(leases[held.id]), finishedLease = try #require(leases[finished.id])
            try await mine.finish([(finishedLease, .completed(TaskCompletion()))])
            let staleEpoch = LeaseToken(taskID: stolen.id, epoch: try #require(leases[stolen.id]).epoch + 7)

            let event: (type: EventType, data: [String: JSONValue]) = (.downloadTaskDidWriteData, ["bytesWritten": 1])
            let result = try await mine.heartbeat(
                [progress(heldLease, received: 1), progress(staleEpoch, received: 999, event: event), progress(finishedLease, received: 999, event: event)],
                workers: 1, version: "test"
            )
            #expect(result.lost == [staleEpoch, finishedLease])
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: stolen.id).countOfBytesReceived == 0)
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: finished.id).countOfBytesReceived == 0)
            #expect(try await fixture.eventTypes(of: stolen.id) == ["task.didCreateTask"])

            // The right epoch from another instance is not this instance's lease either.
            try await fixture.execute("UPDATE tasks SET lease_expires_at = now() + interval '2 seconds' WHERE id = $1", [held.id])
            let foreign = try await theirs.heartbeat([progress(heldLease, received: 777)], workers: 1, version: "test")
            #expect(foreign.lost == [heldLease])
            #expect(try await secondsLeft(fixture, held.id) < 3)
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: held.id).countOfBytesReceived == 1)
        }
    }

    @Test("a heartbeat appends the coalesced progress event with the next sequence and announces it")
    func progressEvents() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            let task = try await fixture.makeTask()
            let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch)
            try await NotificationRecorder.with(conninfo: fixture.test.conninfo, channels: [NotificationChannel.events]) { recorder in
                _ = try await ledger.heartbeat(
                    [progress(lease, received: 100, event: (.downloadTaskDidWriteData, ["bytesWritten": 100, "totalBytesWritten": 100]))],
                    workers: 1, version: "test"
                )
                _ = try await ledger.heartbeat([progress(lease, received: 100)], workers: 1, version: "test")
                let rows = try await fixture.rows("SELECT type, sequence, data, tenant_id, session_id FROM events WHERE task_id = $1 ORDER BY sequence", [task.id])
                #expect(rows.count == 2)
                let row = try #require(rows.last)
                #expect(try row.decode("type", as: String.self) == "downloadTask.didWriteData")
                #expect(try row.decode("sequence", as: Int64.self) == 2)
                #expect(try row.decode("tenant_id", as: String.self) == fixture.tenant.id)
                let data = try PostgresJSONFactory.decode(JSONValue.self, from: try row.decode("data", as: PostgresJSON.self))
                #expect(data == ["bytesWritten": 100, "totalBytesWritten": 100, "sequence": 2, "taskId": .string(task.id), "sessionId": .string(fixture.session.id)])
                #expect(await recorder.waitForPayload(on: NotificationChannel.events) != nil)
                // NotificationChannel.events promises the tenant id as payload, as EventWriter sends it.
                #expect(recorder.payloads(on: NotificationChannel.events) == [fixture.tenant.id])
            }
        }
    }

    @Test("a stop request reaches the owner in the heartbeat, and its lease is still renewed")
    func stopRequests() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            let suspended = try await fixture.makeTask()
            let cancelled = try await fixture.makeTask()
            let untouched = try await fixture.makeTask()
            let leases = try await ledger.claim(limit: 10).map { LeaseToken(taskID: $0.taskID, epoch: $0.leaseEpoch) }
            _ = try await fixture.tasks.apply(.suspend, tenantID: fixture.tenant.id, taskID: suspended.id, resumeData: fixture.resumeData)
            _ = try await fixture.tasks.apply(.cancelProducingResumeData, tenantID: fixture.tenant.id, taskID: cancelled.id, resumeData: fixture.resumeData)
            let result = try await ledger.heartbeat(leases.map { progress($0) }, workers: 1, version: "test")
            #expect(result.lost.isEmpty)
            let reasons = Dictionary(uniqueKeysWithValues: result.stopRequests.map { ($0.key.taskID, $0.value) })
            #expect(reasons == [suspended.id: .suspend, cancelled.id: .cancelProducingResumeData])
            #expect(reasons[untouched.id] == nil)
        }
    }

    @Test("an instance with no transfers still reports itself")
    func emptyHeartbeat() async throws {
        try await StoreFixture.with { fixture in
            let result = try await fixture.ledger("idle").heartbeat([], workers: 4, version: "v")
            #expect(result.lost.isEmpty && result.stopRequests.isEmpty)
            #expect(try await fixture.value("SELECT running_transfers FROM instances WHERE id = 'idle'", as: Int.self) == 0)
        }
    }

    @Test("a batch mixing present and absent values carries awkward text (quotes, backslashes, braces, commas, NULL, emoji) intact")
    func awkwardTextInBatches() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            let plain = try await fixture.makeTask()
            let awkward = try await fixture.makeTask()
            let leases = Dictionary(uniqueKeysWithValues: try await ledger.claim(limit: 10).map { ($0.taskID, LeaseToken(taskID: $0.taskID, epoch: $0.leaseEpoch)) })
            let text = #"a,b}{"c"\d\"NULL" é🚀 'x' \u0000 \t"#
            let checkpoint = TransferCheckpoint(
                partialFile: TenantFiles.partialName(taskID: awkward.id), bytesOnDisk: 10, validator: .strongETag(#""\{,}""#),
                url: "https://origin.example/a,b/{c}?q=\"x\"", expectedTotalBytes: nil
            )
            let response = HTTPResponseSnapshot(url: checkpoint.url, head: ResponseHead(statusCode: 206, fields: [("X-Odd", text), ("ETag", #""\{,}""#)]))
            let event: (type: EventType, data: [String: JSONValue]) = (.downloadTaskDidWriteData, ["note": .string(text), "list": [nil, "NULL", 1]])
            let result = try await ledger.heartbeat([
                progress(try #require(leases[plain.id]), received: 1),
                progress(try #require(leases[awkward.id]), received: 10, checkpoint: checkpoint, response: response, event: event),
            ], workers: 1, version: "test")
            #expect(result.lost.isEmpty)

            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: awkward.id)
            #expect(stored.response == response)
            let json = try await fixture.column("checkpoint", of: awkward.id, as: PostgresJSON.self)
            #expect(try PostgresJSONFactory.decode(TransferCheckpoint.self, from: json) == checkpoint)
            #expect(try await fixture.column("checkpoint IS NULL AND response IS NULL", of: plain.id, as: Bool.self))
            let data = try await fixture.value("SELECT data FROM events WHERE task_id = $1 AND sequence = 2", [awkward.id], as: PostgresJSON.self)
            let decoded = try PostgresJSONFactory.decode(JSONValue.self, from: data)
            #expect(decoded["note"] == .string(text))
            #expect(decoded["list"] == [nil, "NULL", 1])
        }
    }
}
