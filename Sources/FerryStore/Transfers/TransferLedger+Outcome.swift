import FerryCore
import Foundation
import Postgres

/// How an owner hands a task back.
public enum TransferOutcome: Sendable {
    /// The task is done (successfully or not).
    case completed(TaskCompletion)
    /// The task goes back to waiting: suspended by the tenant, released at shutdown, or
    /// retried after `notBefore` (background sessions). The checkpoint is where it continues.
    /// `countsAsAttempt`: the transfer failed and the task retries it, which counts a failed
    /// attempt (`attempt_count`). Nothing else does (a suspend, a shutdown, a busy file, a
    /// claim): the retry policy's limit sees only attempts that failed, not how often a task was
    /// suspended or its instance restarted.
    case released(checkpoint: TransferCheckpoint?, notBefore: Date?, bytesReceived: Int64, bytesSent: Int64, countsAsAttempt: Bool = true)
}

/// An event an owner records while its transfer runs (didReceiveResponse, didResumeAtOffset, …).
public struct OwnerEvent: Sendable {
    public var lease: LeaseToken
    public var type: EventType
    public var data: [String: JSONValue]
    /// Chosen by the owner when it must refer to the event afterwards (a decision it asks for).
    public var id: String?
    /// "default" for a decision event that nobody is asked about: written as decided.
    public var decidedBy: String?

    public init(lease: LeaseToken, type: EventType, data: [String: JSONValue], id: String? = nil, decidedBy: String? = nil) {
        self.lease = lease
        self.type = type
        self.data = data
        self.id = id
        self.decidedBy = decidedBy
    }
}

extension TransferLedger {
    /// Records outcomes, each fenced by its lease; several in one transaction so that many small
    /// transfers finishing together cost one commit. Returns the leases that were no longer held
    /// (their outcome was dropped: the task belongs to someone else now).
    /// `events` are recorded first, in the same transaction (the last events of the tasks that end).
    /// `resumeData` issues the resume data of a task cancelled by producing it while it was being
    /// handed back.
    @discardableResult
    public func finish(
        _ outcomes: [(lease: LeaseToken, outcome: TransferOutcome)], after events: [OwnerEvent] = [],
        resumeData: ResumeDataIssuer? = nil
    ) async throws -> Set<LeaseToken> {
        try await finish(outcomes, after: events, asking: [], terms: nil, resumeData: resumeData).lost
    }

    /// `finish`, which also makes the deliveries of the events it writes and claims those of the
    /// decision events in `asking` among `events` (see `record(_:asking:terms:)`), in the same
    /// transaction.
    public func finish(
        _ outcomes: [(lease: LeaseToken, outcome: TransferOutcome)], after events: [OwnerEvent],
        asking: [AskedDecision], terms: DecisionClaimTerms?, resumeData: ResumeDataIssuer? = nil
    ) async throws -> (lost: Set<LeaseToken>, webhooks: DeliveriesWritten) {
        guard !outcomes.isEmpty || !events.isEmpty else { return ([], DeliveriesWritten()) }
        let instanceID = self.instanceID
        // Every statement here finds its rows by key: plans made once serve every batch.
        return try await pool.withTransaction(plans: .byKeyPlannedOnce) { connection in
            // Every task with events or an end is locked (and read) once, all together.
            let locked = try Self.lockOwned(Set(events.map(\.lease) + outcomes.map(\.lease)), instanceID: instanceID, on: connection)
            var batch = EventBatch()
            try Self.record(events, locked: locked, into: &batch, on: connection)
            var completions = CompletionBatch()
            var lost: Set<LeaseToken> = []
            var completedSessions: Set<String> = []
            for (lease, outcome) in outcomes {
                guard let row = locked[lease] else {
                    lost.insert(lease)
                    continue
                }
                let ref = EventWriter.TaskRef(
                    tenantID: try row.decode("tenant_id"), sessionID: try row.decode("session_id"), taskID: lease.taskID
                )
                let kind = TaskKind(rawValue: try row.decode("kind")) ?? .data
                let isCanceling = try row.decode("state", as: String.self) == TaskState.canceling.rawValue
                switch outcome {
                case .completed(var completion):
                    if isCanceling, completion.error == nil, completion.downloadFile == nil {
                        // Cancelled while its end was being finalised (a willCacheResponse, or a
                        // cached response's didReceiveResponse, waits up to the decision timeout):
                        // the transfer had left the worker the stop would have reached, and the
                        // task ended as a success. URLSession's ends -999. A download whose file is
                        // already in place keeps it: that cancel came too late.
                        completion.error = TransferError(code: .cancelled, failingURL: completion.currentRequest?.url)
                        completion.responseBody = nil
                    }
                    try completion.write(ref, kind: kind, into: &completions, events: &batch, on: connection)
                    completedSessions.insert(ref.sessionID)
                case .released(let checkpoint, _, let bytesReceived, let bytesSent, _) where isCanceling:
                    // Cancelled while being handed back: nobody would claim it any more, so end it here.
                    var completion = TaskCompletion.cancelled(
                        tenantID: ref.tenantID, taskID: lease.taskID,
                        originalRequest: try row.decodeJSON("original_request", as: TransferRequest.self),
                        currentRequest: try row.decodeJSONIfPresent("current_request", as: TransferRequest.self), checkpoint: checkpoint,
                        resumeData: try Self.producesResumeData(row) ? resumeData : nil
                    )
                    completion.bytesReceived = bytesReceived
                    completion.bytesSent = bytesSent
                    try completion.write(ref, kind: kind, into: &completions, events: &batch, on: connection)
                    completedSessions.insert(ref.sessionID)
                case .released(let checkpoint, let notBefore, let bytesReceived, let bytesSent, let countsAsAttempt):
                    try connection.execute(
                        """
                        UPDATE tasks t SET lease_owner = NULL, lease_expires_at = NULL, stop_reason = NULL,
                            checkpoint = $2, not_before = $3, bytes_received = $4, bytes_sent = $5, updated_at = now(),
                            attempt_count = attempt_count + CASE WHEN $6 THEN 1 ELSE 0 END,
                            owner_losses = \(Self.ownerLosses(after: "$2::jsonb"))
                        WHERE id = $1
                        """,
                        [lease.taskID, try JSONColumn.encodeOptional(checkpoint), notBefore, bytesReceived, bytesSent, countsAsAttempt]
                    )
                    batch.notify(NotificationChannel.work, lease.taskID)
                }
            }
            try completions.flush(on: connection)
            try SessionInvalidation.finishIfLastTasks(ofSessions: completedSessions, events: &batch, on: connection)
            try batch.flush(on: connection)
            return (lost, try Self.writeDeliveries(of: locked, asking: asking, terms: terms, on: connection))
        }
    }

    /// Appends events of owned transfers in one transaction, each fenced like every owner write
    /// (the events of a task whose lease is lost are dropped).
    /// With `terms` (this instance sends webhooks), also makes the deliveries of the events, and
    /// claims for this instance those of the decision events in `asking`, in the same
    /// transaction (see `WebhookLedger.writeDeliveries`).
    @discardableResult
    public func record(
        _ events: [OwnerEvent], asking: [AskedDecision] = [], terms: DecisionClaimTerms? = nil
    ) async throws -> DeliveriesWritten {
        guard !events.isEmpty else { return DeliveriesWritten() }
        let instanceID = self.instanceID
        return try await pool.withTransaction(plans: .byKeyPlannedOnce) { connection in
            let locked = try Self.lockOwned(Set(events.map(\.lease)), instanceID: instanceID, on: connection)
            var batch = EventBatch()
            try Self.record(events, locked: locked, into: &batch, on: connection)
            try batch.flush(on: connection)
            return try Self.writeDeliveries(of: locked, asking: asking, terms: terms, on: connection)
        }
    }

    /// Makes the deliveries of the events this transaction wrote for the tasks in `locked` with a
    /// delegate, then claims those of the decision events in `asking` (nothing without `terms`).
    private static func writeDeliveries(
        of locked: [LeaseToken: PostgresRow], asking: [AskedDecision], terms: DecisionClaimTerms?, on connection: PostgresConnection
    ) throws -> DeliveriesWritten {
        guard let terms else { return DeliveriesWritten() }
        var delegates: [(taskID: String, endpointID: String)] = []
        for (lease, row) in locked {
            if let endpointID = try row.decode("delegate_endpoint_id", as: String?.self) { delegates.append((lease.taskID, endpointID)) }
        }
        do {
            return try WebhookLedger.writeDeliveries(for: delegates, asking: asking, terms: terms, on: connection)
        } catch {
            throw DeliveriesNotWritten(underlying: error)
        }
    }

    /// Adds the events of the tasks in `locked` to `batch` (for the caller to flush); the
    /// others' leases are lost and their events dropped.
    private static func record(
        _ events: [OwnerEvent], locked: [LeaseToken: PostgresRow], into batch: inout EventBatch, on connection: PostgresConnection
    ) throws {
        for event in events {
            guard let row = locked[event.lease] else { continue }
            let ref = EventWriter.TaskRef(
                tenantID: try row.decode("tenant_id"), sessionID: try row.decode("session_id"), taskID: event.lease.taskID
            )
            if event.type == .taskNeedNewBodyStream, case .number(let generation)? = event.data["generation"] {
                // The API accepts a streamed body for the generation the task asks for.
                try connection.execute("UPDATE tasks SET body_stream_generation = $2 WHERE id = $1", [ref.taskID, Int(generation)])
            }
            batch.append(event.type, for: ref, data: event.data, id: event.id, decidedBy: event.decidedBy)
        }
    }

    /// Whether the task's pending cancel is `cancelByProducingResumeData` (its `stop_reason`).
    static func producesResumeData(_ row: PostgresRow) throws -> Bool {
        try row.decode("stop_reason", as: String?.self) == TaskLifecycle.StopReason.cancelProducingResumeData.rawValue
    }

    /// Locks the tasks whose leases this instance still holds, in id order (as a session's
    /// invalidation does, so the two cannot deadlock), and reads what their ends need; a lease
    /// missing from the answer is lost.
    static func lockOwned(_ leases: Set<LeaseToken>, instanceID: String, on connection: PostgresConnection) throws -> [LeaseToken: PostgresRow] {
        guard !leases.isEmpty else { return [:] }
        let ordered = leases.sorted { $0.taskID < $1.taskID }
        let rows = try connection.query(
            """
            SELECT t.id, t.lease_epoch, t.tenant_id, t.session_id, t.kind, t.state, t.stop_reason, t.original_request, t.current_request,
                   coalesce(t.delegate_endpoint_id, (SELECT s.delegate_endpoint_id FROM sessions s WHERE s.id = t.session_id))
                       AS delegate_endpoint_id
            FROM tasks t JOIN unnest($1::text[], $2::int8[]) AS l(id, epoch) ON t.id = l.id AND t.lease_epoch = l.epoch
            WHERE t.lease_owner = $3
            ORDER BY t.id
            FOR UPDATE OF t
            """,
            [ordered.map(\.taskID), ordered.map(\.epoch), instanceID]
        )
        var locked: [LeaseToken: PostgresRow] = [:]
        for row in rows {
            locked[LeaseToken(taskID: try row.decode("id"), epoch: try row.decode("lease_epoch"))] = row
        }
        return locked
    }
}
