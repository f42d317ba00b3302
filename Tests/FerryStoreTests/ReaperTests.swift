import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("TransferLedger.reapExpiredLeases: what becomes of tasks whose owner stopped")
struct ReaperTests {
    /// A task claimed by an owner that then stopped renewing: its lease has lapsed.
    private func abandoned(
        _ fixture: StoreFixture, session: SessionRecord? = nil, method: String = "GET", checkpoint: ((String) -> TransferCheckpoint)? = nil
    ) async throws -> TaskRecord {
        let task = try await fixture.makeTask(session: session, method: method)
        _ = try await fixture.claim(task.id, with: fixture.ledger("dead-instance"))
        if let checkpoint {
            try await fixture.execute("UPDATE tasks SET checkpoint = $2 WHERE id = $1", [task.id, try PostgresJSONFactory.json(checkpoint(task.id))])
        }
        try await fixture.expireLease(of: task.id)
        return task
    }

    @Test("a background session's task is released and another instance takes it over from its checkpoint")
    func backgroundTakeover() async throws {
        try await StoreFixture.with(sessionKind: .background) { fixture in
            let task = try await abandoned(fixture) { StoreFixture.checkpoint(taskID: $0) }
            let live = try await fixture.makeTask()
            _ = try await fixture.claim(live.id, with: fixture.ledger("alive"))
            let survivor = fixture.ledger("survivor")
            #expect(try await survivor.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 1)
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .running)
            let claim = try await fixture.claim(task.id, with: survivor)
            #expect(claim.leaseEpoch == 2)
            #expect(claim.checkpoint == StoreFixture.checkpoint(taskID: task.id))
            #expect(try await fixture.column("lease_owner", of: live.id, as: String?.self) == "alive")
            #expect(try await survivor.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 0)
        }
    }

    @Test("a background task whose owner stops a third time while running it completes with -1005 and its resume data")
    func backgroundTaskThatKeepsStoppingItsOwners() async throws {
        try await StoreFixture.with(sessionKind: .background) { fixture in
            let task = try await abandoned(fixture) { StoreFixture.checkpoint(taskID: $0) }
            let survivor = fixture.ledger("survivor")
            // Twice taken up again, as any background task whose owner stopped.
            for losses in 1...2 {
                #expect(try await survivor.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 1)
                #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .running)
                #expect(try await fixture.column("owner_losses", of: task.id, as: Int.self) == losses)
                _ = try await fixture.claim(task.id, with: fixture.ledger("crashing-\(losses)"))
                try await fixture.expireLease(of: task.id)
            }
            // The third time, it ends.
            #expect(try await survivor.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 1)
            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(stored.state == .completed)
            #expect(stored.error?.code == URLErrorCode.networkConnectionLost.rawValue)
            #expect(stored.error?.reason?.contains("3 times") == true)
            #expect(stored.error?.resumeData != nil)
            #expect(try await fixture.eventTypes(of: task.id).last == "task.didCompleteWithError")
        }
    }

    @Test("a background download whose checkpoint moves on between its owners' stops is taken up again every time")
    func backgroundDownloadThatProgressesBetweenStops() async throws {
        try await StoreFixture.with(sessionKind: .background) { fixture in
            let task = try await abandoned(fixture) { StoreFixture.checkpoint(taskID: $0) }
            let survivor = fixture.ledger("survivor")
            // Five restarts of its owners, each after the download wrote a further checkpoint.
            for restart in 1...5 {
                #expect(try await survivor.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 1)
                #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .running, "restart \(restart)")
                #expect(try await fixture.column("owner_losses", of: task.id, as: Int.self) == 1)
                let owner = fixture.ledger("restarted-\(restart)")
                let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: owner).leaseEpoch)
                let further = StoreFixture.checkpoint(taskID: task.id, bytes: 4096 + Int64(restart) * 1024, total: 100_000)
                _ = try await owner.heartbeat([TransferProgress(
                    lease: lease, bytesReceived: further.bytesOnDisk, bytesSent: 0, bytesExpectedToReceive: 100_000, bytesExpectedToSend: 0,
                    checkpoint: further
                )], workers: 1, version: "test")
                #expect(try await fixture.column("owner_losses", of: task.id, as: Int.self) == 0)
                try await fixture.expireLease(of: task.id)
            }
            // Then stops without progress: the third in a row ends it.
            for losses in 1...2 {
                #expect(try await survivor.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 1)
                #expect(try await fixture.column("owner_losses", of: task.id, as: Int.self) == losses)
                _ = try await fixture.claim(task.id, with: fixture.ledger("stuck-\(losses)"))
                try await fixture.expireLease(of: task.id)
            }
            #expect(try await survivor.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 1)
            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(stored.state == .completed)
            #expect(stored.error?.code == URLErrorCode.networkConnectionLost.rawValue)
        }
    }

    @Test("default and ephemeral downloads complete with -1005, with resume data only when resumable")
    func defaultSessionsFail() async throws {
        try await StoreFixture.with { fixture in
            let ephemeral = try await fixture.makeSession(.ephemeral)
            let resumable = try await abandoned(fixture) { StoreFixture.checkpoint(taskID: $0) }
            let byDate = try await abandoned(fixture, session: ephemeral) { StoreFixture.checkpoint(taskID: $0, validator: .lastModified("Tue, 01 Jul 2025 10:00:00 GMT")) }
            let noValidator = try await abandoned(fixture, session: ephemeral) { StoreFixture.checkpoint(taskID: $0, validator: nil) }
            let nothingOnDisk = try await abandoned(fixture) { StoreFixture.checkpoint(taskID: $0, bytes: 0) }
            let post = try await abandoned(fixture, method: "POST") { StoreFixture.checkpoint(taskID: $0) }
            let noCheckpoint = try await abandoned(fixture)

            #expect(try await fixture.ledger("reaper").reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 6)
            for task in [resumable, byDate, noValidator, nothingOnDisk, post, noCheckpoint] {
                let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
                #expect(stored.state == .completed)
                #expect(stored.error?.code == URLErrorCode.networkConnectionLost.rawValue)
                #expect(stored.error?.reason != nil)
                #expect(try await fixture.eventTypes(of: task.id).last == "task.didCompleteWithError")
                let hasResumeData = stored.error?.resumeData != nil
                let keepsCheckpoint = try await fixture.column("checkpoint IS NOT NULL", of: task.id, as: Bool.self)
                let shouldResume = task.id == resumable.id || task.id == byDate.id
                #expect(hasResumeData == shouldResume, "task \(task.id)")
                #expect(keepsCheckpoint == shouldResume, "task \(task.id)")
            }
            let token = try #require(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: resumable.id).error?.resumeData)
            let decoded = try fixture.resumeData.decode(token, tenantID: fixture.tenant.id)
            #expect(decoded.taskID == resumable.id)
            #expect(decoded.validator == .strongETag("\"v1\""))
            #expect(decoded.bytesOnDisk == 4096)
        }
    }

    @Test("a task being cancelled completes with -999; a suspended one only loses its owner")
    func cancelingAndSuspended() async throws {
        try await StoreFixture.with(sessionKind: .background) { fixture in
            let canceling = try await fixture.makeTask()
            let suspended = try await fixture.makeTask()
            let ledger = fixture.ledger("dead-instance")
            _ = try await ledger.claim(limit: 10)
            _ = try await fixture.tasks.apply(.cancel, tenantID: fixture.tenant.id, taskID: canceling.id, resumeData: fixture.resumeData)
            _ = try await fixture.tasks.apply(.suspend, tenantID: fixture.tenant.id, taskID: suspended.id, resumeData: fixture.resumeData)
            try await fixture.expireLease(of: canceling.id)
            try await fixture.expireLease(of: suspended.id)

            #expect(try await fixture.ledger("reaper").reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 2)
            let cancelled = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: canceling.id)
            #expect(cancelled.state == .completed)
            #expect(cancelled.error?.code == -999)
            #expect(try await fixture.eventTypes(of: canceling.id).last == "task.didCompleteWithError")
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: suspended.id).state == .suspended)
            #expect(try await fixture.column("lease_owner IS NULL AND stop_reason IS NULL", of: suspended.id, as: Bool.self))
        }
    }

    @Test("cancelByProducingResumeData whose owner died still produces resume data")
    func cancelProducingResumeDataOwnerDied() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            _ = try await fixture.claim(task.id, with: fixture.ledger("dead-instance"))
            try await fixture.execute("UPDATE tasks SET checkpoint = $2 WHERE id = $1", [task.id, try PostgresJSONFactory.json(StoreFixture.checkpoint(taskID: task.id))])
            let asked = try await fixture.tasks.apply(.cancelProducingResumeData, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
            #expect(asked.action == .stopTransfer(.cancelProducingResumeData))
            try await fixture.expireLease(of: task.id)
            try await fixture.ledger("reaper").reapExpiredLeases(resumeData: fixture.resumeData, holding: [])
            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(stored.error?.code == -999)
            #expect(stored.error?.resumeData != nil)
        }
    }

    @Test("resuming a suspended task whose owner died lets another instance claim it instead of failing it")
    func resumeAfterOwnerDied() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            _ = try await fixture.claim(task.id, with: fixture.ledger("dead-instance"))
            _ = try await fixture.tasks.apply(.suspend, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
            try await fixture.expireLease(of: task.id)
            let resumed = try await fixture.tasks.apply(.resume, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
            #expect(resumed.action == .schedule)
            #expect(resumed.task.state == .running)

            let successor = fixture.ledger("successor")
            let claimed = try await successor.claim(limit: 10)
            try await successor.reapExpiredLeases(resumeData: fixture.resumeData, holding: [])
            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(claimed.map(\.taskID) == [task.id])
            #expect(stored.error == nil)
        }
    }
}

@Suite("Leases of this instance: left to its heartbeat when late, taken back after a restart")
struct OwnLeaseTests {
    @Test("a late lease of this instance is not reaped by itself; after a restart it is taken back")
    func ownLeases() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            let ledger = fixture.ledger("ferry-1")
            _ = try await fixture.claim(task.id, with: ledger)
            try await fixture.execute("UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [task.id])
            #expect(try await ledger.reapExpiredLeases(resumeData: fixture.resumeData, holding: [task.id]) == 0)
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .running)
            // The same name after a restart: whatever it held belongs to the previous process.
            try await fixture.execute("UPDATE tasks SET lease_expires_at = now() + interval '1 minute' WHERE id = $1", [task.id])
            #expect(try await fixture.ledger("ferry-1").reapLeasesOfPreviousLife(resumeData: fixture.resumeData) == 1)
            let task2 = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(task2.state == .completed)
            #expect(task2.error?.code == -1005)
        }
    }
}
