import FerryCore
import Foundation
import Postgres

extension TaskStore {
    /// What a command did, for the API to answer with.
    public struct CommandResult: Sendable {
        public var task: TaskRecord
        public var action: TaskLifecycle.Action
    }

    /// `resume()`, `suspend()`, `cancel()` and `cancelByProducingResumeData`, applied to the
    /// task's row under a lock so they serialise with claims and completions.
    public func apply(
        _ command: TaskLifecycle.Command, tenantID: String, taskID: String, resumeData: ResumeDataIssuer
    ) async throws -> CommandResult {
        try await pool.withRetriedTransaction { connection in
            try Self.apply(command, tenantID: tenantID, taskID: taskID, resumeData: resumeData, on: connection)
        }
    }

    /// The command inside the caller's transaction (also used to cancel a whole session's tasks).
    static func apply(
        _ command: TaskLifecycle.Command, tenantID: String, taskID: String, resumeData: ResumeDataIssuer,
        on connection: PostgresConnection
    ) throws -> CommandResult {
        let row = try TaskRow.lock(tenantID: tenantID, taskID: taskID, on: connection)
        let task = try TaskRow.decode(row)
        var lifecycle = TaskLifecycle(state: task.state, isOwned: try row.decode("is_owned", as: Bool.self))
        let action = lifecycle.apply(command)
        switch action {
        case .none:
            break
        case .schedule:
            // A lease left by an owner that died is void: clear it so the task can be claimed.
            // A task resumed while its owner still holds it was suspended a moment ago, and that
            // owner has been told to stop (the notification is out): the stop stands, so that the
            // row says what happens (the transfer is handed back and claimed again, and the
            // heartbeat repeats a stop the notification did not deliver). Cleared, the row looked
            // like a transfer going on, and a body PUT in that window went to a stream its next
            // transfer would never read.
            // A suspended task is not subject to timeouts: the resource deadline moves on by the
            // time it spent suspended, so timeoutIntervalForResource counts only resumed time.
            try connection.execute(
                """
                UPDATE tasks SET state = 'running', stop_reason = CASE WHEN $2 THEN stop_reason END, updated_at = now(),
                                 started_at = coalesce(started_at, now()),
                                 resource_deadline = resource_deadline + coalesce(now() - suspended_at, interval '0'),
                                 suspended_at = NULL,
                                 lease_owner = CASE WHEN $2 THEN lease_owner END,
                                 lease_expires_at = CASE WHEN $2 THEN lease_expires_at END
                WHERE id = $1
                """,
                [taskID, lifecycle.isOwned]
            )
            try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.work, taskID])
        case .unschedule:
            try connection.execute(
                """
                UPDATE tasks SET state = 'suspended', lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
                                 suspended_at = coalesce(suspended_at, now())
                WHERE id = $1
                """,
                [taskID]
            )
        case .stopTransfer(let reason):
            try connection.execute(
                """
                UPDATE tasks SET state = $2, stop_reason = $3, updated_at = now(),
                                 suspended_at = CASE WHEN $2 = 'suspended' THEN coalesce(suspended_at, now()) END
                WHERE id = $1
                """,
                [taskID, lifecycle.state.rawValue, reason.rawValue]
            )
            let owner = try row.decode("lease_owner", as: String?.self) ?? ""
            try connection.execute(
                "SELECT pg_notify($1, $2)", [NotificationChannel.control, "\(taskID) \(owner) \(reason.rawValue)"]
            )
        case .completeCancelled(let producingResumeData):
            let completion = TaskCompletion.cancelled(
                tenantID: tenantID, taskID: taskID, originalRequest: task.originalRequest, currentRequest: task.currentRequest,
                checkpoint: try row.decodeJSONIfPresent("checkpoint", as: TransferCheckpoint.self),
                resumeData: producingResumeData ? resumeData : nil
            )
            let ref = EventWriter.TaskRef(tenantID: tenantID, sessionID: task.sessionID, taskID: taskID)
            try completion.write(ref, kind: task.kind, on: connection)
        }
        return CommandResult(task: try TaskRow.find(tenantID: tenantID, taskID: taskID, on: connection), action: action)
    }
}
