import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("TransferLedger.finish and record: fenced by the lease epoch")
struct FinishTests {
    @Test("a completed download is written with URLSession's events in order and wakes long-polls")
    func completesDownload() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            let task = try await fixture.makeTask()
            let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch)
            let response = HTTPResponseSnapshot(url: task.originalRequest.url, head: ResponseHead(statusCode: 200))
            try await NotificationRecorder.with(conninfo: fixture.test.conninfo, channels: [NotificationChannel.taskCompleted]) { recorder in
                let lost = try await ledger.finish([(lease, .completed(TaskCompletion(
                    response: response, downloadFile: task.id, bytesReceived: 10_000, bytesExpectedToReceive: 10_000, metrics: ["redirectCount": 0]
                )))])
                #expect(lost.isEmpty)
                #expect(await recorder.waitForPayload(on: NotificationChannel.taskCompleted) { $0 == task.id } != nil)
            }
            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(stored.state == .completed)
            #expect(stored.hasDownloadedFile)
            #expect(stored.countOfBytesReceived == 10_000)
            #expect(stored.fractionCompleted == 1)
            #expect(try await fixture.eventTypes(of: task.id) == [
                "task.didCreateTask", "downloadTask.didFinishDownloadingTo", "task.didFinishCollectingMetrics", "task.didCompleteWithError",
            ])
            #expect(try await fixture.column("lease_owner IS NULL AND lease_expires_at IS NULL", of: task.id, as: Bool.self))
        }
    }

    @Test("data tasks ending together keep their response bodies, whatever their bytes and size")
    func responseBodies() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            let bodies: [[UInt8]] = [
                (0...255).map { UInt8($0) },  // every byte value
                [],
                (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) },
            ]
            var leases: [LeaseToken] = []
            for _ in bodies {
                let task = try await fixture.makeTask()
                leases.append(LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch))
            }
            let lost = try await ledger.finish(zip(leases, bodies).map { lease, body in
                (lease, .completed(TaskCompletion(responseBody: body)))
            })
            #expect(lost.isEmpty)
            for (lease, body) in zip(leases, bodies) {
                let stored = try await fixture.tasks.responseBody(tenantID: fixture.tenant.id, taskID: lease.taskID)
                #expect(stored.task.state == .completed)
                #expect(stored.body == body)
            }
        }
    }

    @Test("an old owner's completion is dropped and reported lost; the new owner's is written")
    func fencedCompletion() async throws {
        try await StoreFixture.with(sessionKind: .background) { fixture in
            let old = fixture.ledger("instance-old")
            let new = fixture.ledger("instance-new")
            let task = try await fixture.makeTask()
            let oldLease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: old).leaseEpoch)
            try await fixture.expireLease(of: task.id)
            #expect(try await new.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 1)
            let newLease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: new).leaseEpoch)
            #expect(newLease.epoch == oldLease.epoch + 1)

            let failure = TaskCompletion(error: TransferError(code: .timedOut, failingURL: task.originalRequest.url))
            #expect(try await old.finish([(oldLease, .completed(failure))]) == [oldLease])
            try await old.record([OwnerEvent(lease: oldLease, type: .downloadTaskDidResumeAtOffset, data: ["fileOffset": 0])])
            // The same instance name with a stale epoch (a restarted instance) is fenced too.
            #expect(try await new.finish([(LeaseToken(taskID: task.id, epoch: oldLease.epoch), .completed(failure))]).count == 1)
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .running)
            #expect(try await fixture.eventTypes(of: task.id) == ["task.didCreateTask"])

            #expect(try await new.finish([(newLease, .completed(TaskCompletion(bytesReceived: 3)))]).isEmpty)
            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(stored.state == .completed)
            #expect(stored.error == nil)
            #expect(stored.countOfBytesReceived == 3)
            // And once completed, even the last owner's second word is dropped.
            #expect(try await new.finish([(newLease, .completed(failure))]) == [newLease])
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).error == nil)
        }
    }

    @Test("several outcomes in one call: held ones are written, lost ones reported")
    func batchOutcomes() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            for _ in 0..<3 { _ = try await fixture.makeTask() }
            let leases = try await ledger.claim(limit: 10).map { LeaseToken(taskID: $0.taskID, epoch: $0.leaseEpoch) }
            let stale = LeaseToken(taskID: leases[2].taskID, epoch: leases[2].epoch - 1)
            let lost = try await ledger.finish([
                (leases[0], .completed(TaskCompletion())),
                (stale, .completed(TaskCompletion())),
                (leases[1], .released(checkpoint: nil, notBefore: nil, bytesReceived: 0, bytesSent: 0)),
            ])
            #expect(lost == [stale])
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: leases[0].taskID).state == .completed)
            #expect(try await fixture.column("lease_owner IS NULL", of: leases[1].taskID, as: Bool.self))
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: leases[2].taskID).state == .running)
        }
    }

    @Test("a released task keeps its checkpoint and becomes claimable again once notBefore passes")
    func releasedAfterNotBefore() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            let task = try await fixture.makeTask()
            let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch)
            let checkpoint = StoreFixture.checkpoint(taskID: task.id, bytes: 1234)
            let notBefore = Date().addingTimeInterval(600)
            try await NotificationRecorder.with(conninfo: fixture.test.conninfo, channels: [NotificationChannel.work]) { recorder in
                let lost = try await ledger.finish([(lease, .released(checkpoint: checkpoint, notBefore: notBefore, bytesReceived: 1234, bytesSent: 0))])
                #expect(lost.isEmpty)
                #expect(await recorder.waitForPayload(on: NotificationChannel.work) { $0 == task.id } != nil)
            }
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .running)
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).countOfBytesReceived == 1234)
            #expect(try await ledger.claim(limit: 10).isEmpty)

            // Time passes (without waiting for it): notBefore is now in the past.
            try await fixture.execute("UPDATE tasks SET not_before = now() - interval '1 second' WHERE id = $1", [task.id])
            let again = try await fixture.claim(task.id, with: fixture.ledger("instance-b"))
            #expect(again.checkpoint == checkpoint)
            #expect(again.leaseEpoch == lease.epoch + 1)
            #expect(again.previousAttempts == 1)
        }
    }

    @Test("a transfer released after a suspend stays suspended until resumed")
    func releasedWhileSuspended() async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger()
            let task = try await fixture.makeTask()
            let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch)
            _ = try await fixture.tasks.apply(.suspend, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
            try await ledger.finish([(lease, .released(checkpoint: nil, notBefore: nil, bytesReceived: 10, bytesSent: 0))])
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .suspended)
            #expect(try await ledger.claim(limit: 10).isEmpty)
            let resumed = try await fixture.tasks.apply(.resume, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
            #expect(resumed.action == .schedule)
            #expect(try await ledger.claim(limit: 10).map(\.taskID) == [task.id])
        }
    }

    @Test("a task cancelled while its owner releases it (e.g. to retry) ends cancelled instead of staying canceling with no owner")
    func releasedWhileCanceling() async throws {
        try await StoreFixture.with(sessionKind: .background) { fixture in
            let ledger = fixture.ledger()
            let task = try await fixture.makeTask()
            let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch)
            // The tenant cancels; the owner, whose transfer just failed, releases it for a retry.
            _ = try await fixture.tasks.apply(.cancel, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
            try await ledger.finish([(lease, .released(checkpoint: nil, notBefore: Date().addingTimeInterval(5), bytesReceived: 0, bytesSent: 0))])
            // Nothing else would ever end it: no lease for the reaper, not runnable for a claim.
            #expect(try await ledger.reapExpiredLeases(resumeData: fixture.resumeData, holding: []) == 0)
            #expect(try await ledger.claim(limit: 10).isEmpty)
            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(stored.state == .completed)
            #expect(stored.error?.code == -999)
        }
    }

    @Test("cancelByProducingResumeData while the owner hands the task back: the resume data is made from the released checkpoint")
    func releasedWhileCancelingWithResumeData() async throws {
        try await StoreFixture.with(sessionKind: .background) { fixture in
            let ledger = fixture.ledger()
            let task = try await fixture.makeTask()
            let lease = LeaseToken(taskID: task.id, epoch: try await fixture.claim(task.id, with: ledger).leaseEpoch)
            _ = try await fixture.tasks.apply(.cancelProducingResumeData, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
            let checkpoint = StoreFixture.checkpoint(taskID: task.id, bytes: 4096)
            try await ledger.finish(
                [(lease, .released(checkpoint: checkpoint, notBefore: nil, bytesReceived: 4096, bytesSent: 0))],
                resumeData: fixture.resumeData
            )
            let stored = try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id)
            #expect(stored.state == .completed)
            #expect(stored.error?.code == -999)
            #expect(stored.error?.resumeData != nil, "the cancel asked for resume data and the checkpoint has a strong validator")
        }
    }
}
