import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

@Suite("Task commands: resume, suspend, cancel, cancelByProducingResumeData in every state")
struct TaskCommandTests {
    /// A state a task can be in when a command arrives, and how to put a task there.
    struct Situation: Sendable, CustomStringConvertible {
        var description: String
        var state: TaskState
        var isOwned: Bool
        var claimed: Bool
        var leaseLapsed = false
    }

    static let situations = [
        Situation(description: "suspended", state: .suspended, isOwned: false, claimed: false),
        Situation(description: "suspended, owner still stopping", state: .suspended, isOwned: true, claimed: true),
        Situation(description: "suspended, owner's lease lapsed", state: .suspended, isOwned: false, claimed: true, leaseLapsed: true),
        Situation(description: "running, queued", state: .running, isOwned: false, claimed: false),
        Situation(description: "running, owned", state: .running, isOwned: true, claimed: true),
        Situation(description: "running, owner's lease lapsed", state: .running, isOwned: false, claimed: true, leaseLapsed: true),
        Situation(description: "canceling, owned", state: .canceling, isOwned: true, claimed: true),
        Situation(description: "canceling, owner's lease lapsed", state: .canceling, isOwned: false, claimed: true, leaseLapsed: true),
        Situation(description: "completed", state: .completed, isOwned: false, claimed: false),
    ]

    static let commands: [TaskLifecycle.Command] = [.resume, .suspend, .cancel, .cancelProducingResumeData]

    private func arrange(_ situation: Situation, in fixture: StoreFixture, ledger: TransferLedger) async throws -> TaskRecord {
        let task = try await fixture.makeTask(starts: situation.claimed || situation.state == .running)
        if situation.claimed { _ = try await fixture.claim(task.id, with: ledger) }
        let stopReason: String? = switch situation.state {
        case .suspended where situation.claimed: "suspend"
        case .canceling: "cancel"
        default: nil
        }
        try await fixture.execute(
            "UPDATE tasks SET state = $2, stop_reason = $3, completed_at = CASE WHEN $2 = 'completed' THEN now() END WHERE id = $1",
            [task.id, situation.state.rawValue, stopReason]
        )
        if situation.leaseLapsed { try await fixture.expireLease(of: task.id) }
        return task
    }

    @Test("every command in every state does what TaskLifecycle says", arguments: situations)
    func matrix(_ situation: Situation) async throws {
        try await StoreFixture.with { fixture in
            let ledger = fixture.ledger("owner-1")
            try await NotificationRecorder.with(conninfo: fixture.test.conninfo, channels: [NotificationChannel.control, NotificationChannel.work]) { recorder in
                for command in Self.commands {
                    let task = try await arrange(situation, in: fixture, ledger: ledger)
                    var lifecycle = TaskLifecycle(state: situation.state, isOwned: situation.isOwned)
                    let expectedAction = lifecycle.apply(command)
                    let eventsBefore = try await fixture.eventTypes(of: task.id)

                    let result = try await fixture.tasks.apply(command, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)

                    let context = Comment(rawValue: "\(command) on \(situation)")
                    #expect(result.action == expectedAction, context)
                    #expect(result.task.state == lifecycle.state, context)
                    #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == lifecycle.state, context)
                    let events = try await fixture.eventTypes(of: task.id)
                    let stopReason = try await fixture.column("stop_reason", of: task.id, as: String?.self)
                    switch expectedAction {
                    case .none:
                        #expect(events == eventsBefore, context)
                    case .schedule:
                        // An owner still holding the task was told to stop: that stop stands.
                        #expect(stopReason == (situation.isOwned ? "suspend" : nil), context)
                        #expect(result.task.startedAt != nil, context)
                        #expect(await recorder.waitForPayload(on: NotificationChannel.work) { $0 == task.id } != nil, context)
                    case .unschedule:
                        #expect(events == eventsBefore, context)
                    case .stopTransfer(let reason):
                        #expect(stopReason == reason.rawValue, context)
                        #expect(events == eventsBefore, context)
                        #expect(try await fixture.column("lease_owner", of: task.id, as: String?.self) == "owner-1", context)
                        let payload = await recorder.waitForPayload(on: NotificationChannel.control) { $0.hasPrefix(task.id) }
                        #expect(payload == "\(task.id) owner-1 \(reason.rawValue)", context)
                    case .completeCancelled:
                        #expect(result.task.error?.code == URLErrorCode.cancelled.rawValue, context)
                        #expect(result.task.error?.failingURL == task.originalRequest.url, context)
                        #expect(result.task.completedAt != nil, context)
                        #expect(events == eventsBefore + ["task.didCompleteWithError"], context)
                        #expect(try await fixture.column("lease_owner IS NULL AND stop_reason IS NULL", of: task.id, as: Bool.self), context)
                    }
                }
            }
        }
    }

    @Test("a stop of an owned task sets stop_reason and notifies ferry_control with \"<task> <owner> <reason>\"")
    func stopNotifiesOwner() async throws {
        try await StoreFixture.with { fixture in
            try await NotificationRecorder.with(conninfo: fixture.test.conninfo, channels: [NotificationChannel.control]) { recorder in
                let ledger = fixture.ledger("instance-7")
                let cases: [(TaskLifecycle.Command, TaskLifecycle.StopReason, TaskState)] = [
                    (.suspend, .suspend, .suspended), (.cancel, .cancel, .canceling),
                    (.cancelProducingResumeData, .cancelProducingResumeData, .canceling),
                ]
                for (command, reason, state) in cases {
                    let task = try await fixture.makeTask()
                    let claim = try await fixture.claim(task.id, with: ledger)
                    let result = try await fixture.tasks.apply(command, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
                    #expect(result.action == .stopTransfer(reason))
                    #expect(result.task.state == state)
                    #expect(try await fixture.column("stop_reason", of: task.id, as: String?.self) == reason.rawValue)
                    let payload = await recorder.waitForPayload(on: NotificationChannel.control) { $0.hasPrefix(task.id) }
                    #expect(payload == "\(task.id) instance-7 \(reason.rawValue)")
                    // The owner learns it at its next heartbeat as well.
                    let beat = try await ledger.heartbeat(
                        [TransferProgress(lease: LeaseToken(taskID: task.id, epoch: claim.leaseEpoch), bytesReceived: 0, bytesSent: 0, bytesExpectedToReceive: -1, bytesExpectedToSend: 0)],
                        workers: 1, version: "test"
                    )
                    #expect(beat.stopRequests[LeaseToken(taskID: task.id, epoch: claim.leaseEpoch)] == reason)
                }
            }
        }
    }

    @Test("cancel of an unowned task completes it with -999, writes didCompleteWithError and wakes waiters")
    func cancelUnowned() async throws {
        try await StoreFixture.with { fixture in
            try await NotificationRecorder.with(conninfo: fixture.test.conninfo, channels: [NotificationChannel.taskCompleted]) { recorder in
                let task = try await fixture.makeTask(kind: .data)
                let result = try await fixture.tasks.apply(.cancel, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
                #expect(result.action == .completeCancelled(producingResumeData: false))
                #expect(result.task.state == .completed)
                #expect(result.task.error == TransferError(code: .cancelled, failingURL: task.originalRequest.url))
                let completion = try await fixture.value(
                    "SELECT data FROM events WHERE task_id = $1 AND type = 'task.didCompleteWithError'", [task.id], as: PostgresJSON.self
                )
                let data = try PostgresJSONFactory.decode(JSONValue.self, from: completion)
                #expect(data["error"]?["code"] == -999)
                #expect(data["taskId"] == .string(task.id))
                #expect(data["sequence"] == 2)
                #expect(await recorder.waitForPayload(on: NotificationChannel.taskCompleted) { $0 == task.id } != nil)
            }
        }
    }

    @Test("cancelByProducingResumeData of a queued download gives signed resume data only when it can resume")
    func cancelProducingResumeData() async throws {
        try await StoreFixture.with { fixture in
            let resumable = try await fixture.makeTask(starts: false)
            let checkpoint = StoreFixture.checkpoint(taskID: resumable.id)
            let weak = try await fixture.makeTask(starts: false)
            try await fixture.execute("UPDATE tasks SET checkpoint = $2 WHERE id = $1", [resumable.id, try PostgresJSONFactory.json(checkpoint)])
            try await fixture.execute("UPDATE tasks SET checkpoint = $2 WHERE id = $1", [weak.id, try PostgresJSONFactory.json(StoreFixture.checkpoint(taskID: weak.id, validator: nil))])

            let kept = try await fixture.tasks.apply(.cancelProducingResumeData, tenantID: fixture.tenant.id, taskID: resumable.id, resumeData: fixture.resumeData)
            let token = try #require(kept.task.error?.resumeData)
            let decoded = try fixture.resumeData.decode(token, tenantID: fixture.tenant.id)
            #expect(decoded.taskID == resumable.id)
            #expect(decoded.partialFile == checkpoint.partialFile)
            #expect(decoded.bytesOnDisk == checkpoint.bytesOnDisk)
            #expect(try await fixture.column("checkpoint IS NOT NULL", of: resumable.id, as: Bool.self))

            let dropped = try await fixture.tasks.apply(.cancelProducingResumeData, tenantID: fixture.tenant.id, taskID: weak.id, resumeData: fixture.resumeData)
            #expect(dropped.task.error?.code == -999)
            #expect(dropped.task.error?.resumeData == nil)
            #expect(try await fixture.column("checkpoint IS NULL", of: weak.id, as: Bool.self))
        }
    }

    @Test("a command on another tenant's task is not found and changes nothing")
    func foreignTask() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            let other = try await fixture.makeTenant()
            await expectStoreError(.notFound(resource: "task")) {
                try await fixture.tasks.apply(.cancel, tenantID: other.id, taskID: task.id, resumeData: fixture.resumeData)
            }
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .running)
        }
    }
}
