import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("TransferLedger.claim: exclusive, fair across tenants, priority then age, fenced by epochs")
struct ClaimTests {
    @Test("concurrent claimers on several instances get every runnable task exactly once")
    func exclusiveClaims() async throws {
        try await StoreFixture.with(poolSize: 8) { fixture in
            var created: Set<String> = []
            for _ in 0..<60 { created.insert(try await fixture.makeTask(starts: true).id) }
            let ledgers = (0..<6).map { fixture.ledger("instance-\($0)") }
            let claims = try await withThrowingTaskGroup(of: [(String, ClaimedTask)].self) { group in
                for ledger in ledgers {
                    group.addTask {
                        var mine: [(String, ClaimedTask)] = []
                        while true {
                            let batch = try await ledger.claim(limit: 7)
                            if batch.isEmpty { return mine }
                            mine += batch.map { (ledger.instanceID, $0) }
                        }
                    }
                }
                return try await group.reduce(into: [(String, ClaimedTask)]()) { $0 += $1 }
            }
            let ids = claims.map(\.1.taskID)
            #expect(ids.count == 60)
            #expect(Set(ids) == created)
            #expect(claims.allSatisfy { $0.1.leaseEpoch == 1 && $0.1.previousAttempts == 0 })
            // The table agrees with what each claimer was told.
            let owners = try await fixture.rows("SELECT id, lease_owner FROM tasks").map { (try $0.decode(0, as: String.self), try $0.decode(1, as: String.self)) }
            #expect(Dictionary(uniqueKeysWithValues: owners) == Dictionary(uniqueKeysWithValues: claims.map { ($0.1.taskID, $0.0) }))
            #expect(try await ledgers[0].claim(limit: 10).isEmpty)
        }
    }

    @Test("suspended tasks, live leases and a future not_before are skipped; a past not_before is not")
    func skipsUnrunnable() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            _ = try await fixture.makeTask(starts: false)  // suspended
            let leased = try await fixture.makeTask()
            _ = try await fixture.claim(leased.id, with: fixture.ledger("someone-else"))
            _ = try await fixture.makeTask(earliestBeginDate: Date().addingTimeInterval(3600))  // not yet
            let due = try await fixture.makeTask(earliestBeginDate: Date().addingTimeInterval(-5))
            let completed = try await fixture.makeTask()
            try await fixture.execute("UPDATE tasks SET state = 'completed' WHERE id = $1", [completed.id])
            let canceling = try await fixture.makeTask()
            try await fixture.execute("UPDATE tasks SET state = 'canceling' WHERE id = $1", [canceling.id])

            let claimed = try await ledger.claim(limit: 100)
            #expect(claimed.map(\.taskID) == [due.id])
            // A lapsed lease is not claimable either until the reaper hands the task back.
            try await fixture.expireLease(of: leased.id)
            #expect(try await ledger.claim(limit: 100).isEmpty)
        }
    }

    @Test("a claim carries what the transfer needs and starts the resource deadline")
    func claimContents() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask(kind: .upload, url: "https://origin.example/up", method: "PUT", requestBody: [7, 8, 9])
            let claim = try await fixture.claim(task.id, with: fixture.ledger())
            #expect(claim.tenantID == fixture.tenant.id)
            #expect(claim.sessionID == fixture.session.id)
            #expect(claim.kind == .upload)
            #expect(claim.requestBody == [7, 8, 9])
            #expect(claim.uploadSource == .inline)
            #expect(claim.bytesExpectedToSend == 3)
            #expect(claim.originalRequest.httpMethod == "PUT")
            #expect(claim.configuration == fixture.session.configuration)
            let deadline = claim.resourceDeadline.timeIntervalSinceNow
            #expect(abs(deadline - fixture.session.configuration.timeoutIntervalForResource) < 30)
            let lease = try await fixture.column("extract(epoch FROM lease_expires_at - now())::float8", of: task.id, as: Double.self)
            #expect(lease > 10 && lease <= 15)
        }
    }

    @Test("fair across tenants: with 500 of A's tasks queued, a claim of 10 includes all 3 of B's")
    func fairAcrossTenants() async throws {
        try await StoreFixture.with { fixture in
            // A's tasks are older than B's, so age alone would hand out only A's.
            let template = try await fixture.makeTask(starts: false)
            try await fixture.execute(
                """
                INSERT INTO tasks (id, tenant_id, session_id, task_identifier, kind, state, original_request, created_at, host)
                SELECT 'tsk_bulk_' || g, tenant_id, session_id, 100 + g, kind, 'running', original_request, now() - interval '1 hour', 'bulk-' || g
                FROM tasks, generate_series(1, 500) g WHERE id = $1
                """,
                [template.id]
            )
            let tenantB = try await fixture.makeTenant("B")
            let sessionB = try await fixture.makeSession(tenantID: tenantB.id)
            var tasksB: Set<String> = []
            for _ in 0..<3 { tasksB.insert(try await fixture.makeTask(session: sessionB, tenantID: tenantB.id).id) }

            let claimed = try await fixture.ledger().claim(limit: 10)
            #expect(claimed.count == 10)
            #expect(Set(claimed.filter { $0.tenantID == tenantB.id }.map(\.taskID)) == tasksB)
            #expect(claimed.filter { $0.tenantID == fixture.tenant.id }.count == 7)
        }
    }

    @Test("within a tenant, higher priority first, then older first")
    func priorityThenAge() async throws {
        try await StoreFixture.with { fixture in
            let low = try await fixture.makeTask(priority: TaskPriority.low)
            let highOld = try await fixture.makeTask(priority: TaskPriority.high)
            let normal = try await fixture.makeTask(priority: TaskPriority.default)
            let highNew = try await fixture.makeTask(priority: TaskPriority.high)
            let ledger = fixture.ledger()
            var order: [String] = []
            for _ in 0..<4 { order += try await ledger.claim(limit: 1).map(\.taskID) }
            #expect(order == [highOld.id, highNew.id, normal.id, low.id])
        }
    }

    @Test("the lease epoch grows with every claim, and attempts are counted")
    func epochGrows() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            var epochs: [Int64] = []
            for round in 0..<3 {
                let ledger = fixture.ledger("instance-\(round)")
                let claim = try await fixture.claim(task.id, with: ledger)
                #expect(claim.previousAttempts == round)
                epochs.append(claim.leaseEpoch)
                let lost = try await ledger.finish([(LeaseToken(taskID: task.id, epoch: claim.leaseEpoch), .released(checkpoint: nil, notBefore: nil, bytesReceived: 0, bytesSent: 0))])
                #expect(lost.isEmpty)
            }
            #expect(epochs == [1, 2, 3])
            #expect(try await fixture.column("lease_epoch", of: task.id, as: Int64.self) == 3)
        }
    }

    @Test("a claim knows whether an earlier attempt already sent isWaitingForConnectivity, whatever failed between")
    func connectivityWaitAnnouncedOnce() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            let ledger = fixture.ledger()
            let failed = TransferOutcome.released(checkpoint: nil, notBefore: nil, bytesReceived: 0, bytesSent: 0)
            // A first attempt failing for another reason announces nothing.
            let first = try await fixture.claim(task.id, with: ledger)
            #expect(first.isConnectivityWaitAnnounced == false)
            #expect(try await ledger.finish([(LeaseToken(taskID: task.id, epoch: first.leaseEpoch), failed)]).isEmpty)
            let second = try await fixture.claim(task.id, with: ledger)
            #expect(second.isConnectivityWaitAnnounced == false)
            // The second waits for connectivity: from then on every claim knows.
            let lease = LeaseToken(taskID: task.id, epoch: second.leaseEpoch)
            try await ledger.record([OwnerEvent(lease: lease, type: .taskIsWaitingForConnectivity, data: [:])])
            #expect(try await ledger.finish([(lease, failed)]).isEmpty)
            let third = try await fixture.claim(task.id, with: ledger)
            #expect(third.isConnectivityWaitAnnounced)
        }
    }

    @Test("a claim knows whether an earlier transfer of the task already sent willBeginDelayedRequest")
    func delayedStartAnnouncedOnce() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask(earliestBeginDate: Date().addingTimeInterval(-1))
            let ledger = fixture.ledger()
            let first = try await fixture.claim(task.id, with: ledger)
            #expect(first.isDelayedStartAnnounced == false)
            let lease = LeaseToken(taskID: task.id, epoch: first.leaseEpoch)
            try await ledger.record([OwnerEvent(lease: lease, type: .taskWillBeginDelayedRequest, data: [:], decidedBy: "default")])
            let released = TransferOutcome.released(checkpoint: nil, notBefore: nil, bytesReceived: 0, bytesSent: 0, countsAsAttempt: false)
            #expect(try await ledger.finish([(lease, released)]).isEmpty)
            let second = try await fixture.claim(task.id, with: ledger)
            #expect(second.isDelayedStartAnnounced)
            #expect(second.previousAttempts == 0)
        }
    }

    @Test("only a failed release counts an attempt: not a suspend, a shutdown, a busy file or a reaped lease")
    func releasesThatAreNotAttempts() async throws {
        // Background: the reaper hands a lapsed task back rather than completing it.
        try await StoreFixture.with(sessionKind: .background) { fixture in
            let task = try await fixture.makeTask()
            let ledger = fixture.ledger()
            for _ in 0..<3 {
                let claim = try await fixture.claim(task.id, with: ledger)
                #expect(claim.previousAttempts == 0)
                let released = TransferOutcome.released(checkpoint: nil, notBefore: nil, bytesReceived: 0, bytesSent: 0, countsAsAttempt: false)
                #expect(try await ledger.finish([(LeaseToken(taskID: task.id, epoch: claim.leaseEpoch), released)]).isEmpty)
            }
            // A failed attempt counts; an owner that stopped renewing (taken over by the reaper) does not.
            let failed = try await fixture.claim(task.id, with: ledger)
            _ = try await ledger.finish([(LeaseToken(taskID: task.id, epoch: failed.leaseEpoch), .released(checkpoint: nil, notBefore: nil, bytesReceived: 0, bytesSent: 0))])
            let lapsed = try await fixture.claim(task.id, with: fixture.ledger("instance-lapsed"))
            #expect(lapsed.previousAttempts == 1)
            try await fixture.execute("UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [task.id])
            #expect(try await ledger.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 1)
            #expect(try await fixture.claim(task.id, with: ledger).previousAttempts == 1)
        }
    }
}
