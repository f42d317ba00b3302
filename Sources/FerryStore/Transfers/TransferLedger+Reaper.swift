import FerryCore
import Foundation
import Postgres

extension TransferLedger {
    /// What became of tasks whose owner stopped renewing its lease (it crashed, hung, or lost
    /// its database connection):
    /// - background sessions: the task is released and another instance continues it from
    ///   its checkpoint, as a background URLSession survives the app; when its owners stopped
    ///   more than `ownerLossesTolerated` times in a row while running it, its checkpoint never
    ///   moving on in between (`ownerLosses(after:)`), it completes as in a default session (a
    ///   transfer that crashes its process would otherwise crash every instance in turn);
    /// - default and ephemeral sessions: the task completes with -1005 (network connection
    ///   lost), carrying resume data when its download can be resumed;
    /// - a task being cancelled completes with -999; a suspended one just loses its owner.
    ///
    /// This instance's own leases of the tasks it holds (`holding`) are left to its heartbeat even
    /// when late (a busy instance renews them as long as nobody else took them over); those of
    /// tasks it no longer holds are reaped like anyone's: a transfer stopped because its
    /// heartbeats failed (`TransferEngine.runLeaseWatch`) leaves its lease to lapse, and with no
    /// other instance nobody else would ever take it over.
    /// Returns the number of leases taken over.
    @discardableResult
    public func reapExpiredLeases(resumeData: ResumeDataIssuer, limit: Int = 100, holding: [String]) async throws -> Int {
        try await reap(
            "t.lease_owner IS NOT NULL AND t.lease_expires_at < now() AND (t.lease_owner <> $2 OR t.id <> ALL($3::text[]))",
            resumeData: resumeData, limit: limit, holding
        )
    }

    /// At start: the leases held under this instance's name belong to a previous process of the
    /// same name (a restart with a fixed FERRY_INSTANCE_ID), which holds nothing any more.
    @discardableResult
    public func reapLeasesOfPreviousLife(resumeData: ResumeDataIssuer) async throws -> Int {
        var total = 0
        while true {
            let reaped = try await reap("t.lease_owner = $2", resumeData: resumeData, limit: 500)
            total += reaped
            if reaped < 500 { return total }
        }
    }

    /// How many times in a row a background task's owners may stop while running it and it is
    /// still taken up again; at the next, the reaper completes it (with resume data, when it has some).
    static let ownerLossesTolerated = 2

    /// SQL for a task's `owner_losses` (of the row `t`) when `checkpoint` (SQL of a jsonb value,
    /// NULL for none) is written: back to 0 when it holds more bytes than the task's last one. The
    /// count is of losses without progress in between: a long background download that lives
    /// through a few restarts (deploys, a node lost) must not end for it, while a transfer that
    /// crashes its process at the same place every time still does.
    /// Most heartbeats carry no checkpoint: the first branch spares reading the stored one on
    /// each of them (every running transfer, every second).
    static func ownerLosses(after checkpoint: String) -> String {
        """
        CASE WHEN \(checkpoint) IS NULL THEN t.owner_losses
             WHEN (\(checkpoint) ->> 'bytesOnDisk')::int8 > coalesce((t.checkpoint ->> 'bytesOnDisk')::int8, 0) THEN 0
             ELSE t.owner_losses END
        """
    }

    /// `condition` may use `$3`, `$4`, … for `parameters` after the limit ($1) and this instance ($2).
    private func reap(_ condition: String, resumeData: ResumeDataIssuer, limit: Int, _ parameters: any PostgresBindable...) async throws -> Int {
        let instanceID = self.instanceID
        return try await pool.withTransaction { connection in
            let rows = try connection.query(
                """
                SELECT t.id, t.tenant_id, t.session_id, t.kind, t.state, t.original_request, t.current_request,
                       t.checkpoint, t.stop_reason, t.owner_losses, s.kind AS session_kind
                FROM tasks t JOIN sessions s ON s.id = t.session_id
                WHERE \(condition)
                ORDER BY t.lease_expires_at
                LIMIT $1
                FOR UPDATE OF t SKIP LOCKED
                """,
                [limit, instanceID] + parameters
            )
            var completions = CompletionBatch()
            var events = EventBatch()
            var completedSessions: Set<String> = []
            for row in rows {
                let taskID: String = try row.decode("id")
                let tenantID: String = try row.decode("tenant_id")
                let ref = EventWriter.TaskRef(tenantID: tenantID, sessionID: try row.decode("session_id"), taskID: taskID)
                let state = TaskState(rawValue: try row.decode("state")) ?? .running
                let sessionKind = SessionKind(rawValue: try row.decode("session_kind")) ?? .default
                let originalRequest = try row.decodeJSON("original_request", as: TransferRequest.self)
                let failingURL = try row.decodeJSONIfPresent("current_request", as: TransferRequest.self)?.url ?? originalRequest.url
                let checkpoint = try row.decodeJSONIfPresent("checkpoint", as: TransferCheckpoint.self)
                let kind = TaskKind(rawValue: try row.decode("kind")) ?? .data
                // This loss included: a background task's last, when it is one too many.
                let ownerLosses = try row.decode("owner_losses", as: Int.self) + (state == .running ? 1 : 0)
                let lostReason = sessionKind == .background
                    ? "the Ferry instances running this transfer stopped \(ownerLosses) times while it ran; it is not started again"
                    : "the Ferry instance running this transfer stopped"

                switch (state, sessionKind) {
                case (.canceling, _):
                    try TaskCompletion.cancelled(
                        tenantID: tenantID, taskID: taskID, originalRequest: originalRequest,
                        currentRequest: try row.decodeJSONIfPresent("current_request", as: TransferRequest.self), checkpoint: checkpoint,
                        resumeData: try Self.producesResumeData(row) ? resumeData : nil
                    ).write(ref, kind: kind, into: &completions, events: &events, on: connection)
                    completedSessions.insert(ref.sessionID)
                case (.running, _) where sessionKind != .background || ownerLosses > Self.ownerLossesTolerated:
                    let token = resumeData.token(tenantID: tenantID, taskID: taskID, originalRequest: originalRequest, checkpoint: checkpoint)
                    try TaskCompletion(
                        error: TransferError(code: .networkConnectionLost, failingURL: failingURL, reason: lostReason, resumeData: token),
                        checkpoint: token == nil ? nil : checkpoint
                    ).write(ref, kind: kind, into: &completions, events: &events, on: connection)
                    completedSessions.insert(ref.sessionID)
                default:
                    // The owner's end is not the origin's failure: no attempt is counted
                    // (see `TransferOutcome.released`).
                    try connection.execute(
                        """
                        UPDATE tasks SET lease_owner = NULL, lease_expires_at = NULL, stop_reason = NULL, owner_losses = $2, updated_at = now()
                        WHERE id = $1
                        """,
                        [taskID, ownerLosses]
                    )
                    try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.work, taskID])
                }
            }
            try completions.flush(on: connection)
            // The invalidating sessions whose last task ended here are locked once, together, in
            // id order, as an owner's `finish` and the other ends lock them. Locked one by one as
            // each task came (in lease-expiry order), the reaper could hold one session and wait
            // for another that a `finish` held while waiting for the first: a deadlock.
            try SessionInvalidation.finishIfLastTasks(ofSessions: completedSessions, events: &events, on: connection)
            try events.flush(on: connection)
            return rows.count
        }
    }
}
