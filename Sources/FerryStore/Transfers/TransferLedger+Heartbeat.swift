import FerryCore
import Foundation
import Postgres

/// Where one owned transfer stands, reported every heartbeat.
public struct TransferProgress: Sendable {
    public var lease: LeaseToken
    public var bytesReceived: Int64
    public var bytesSent: Int64
    public var bytesExpectedToReceive: Int64
    public var bytesExpectedToSend: Int64
    /// A newer checkpoint than the last one written, if any.
    public var checkpoint: TransferCheckpoint?
    /// The response, once its head arrived (URLSessionTask.response is set from then on).
    public var response: HTTPResponseSnapshot?
    public var currentRequest: TransferRequest?
    /// A coalesced progress event to append (didWriteData / didSendBodyData), if bytes moved.
    public var progressEvent: (type: EventType, data: [String: JSONValue])?

    public init(
        lease: LeaseToken, bytesReceived: Int64, bytesSent: Int64, bytesExpectedToReceive: Int64, bytesExpectedToSend: Int64,
        checkpoint: TransferCheckpoint? = nil, response: HTTPResponseSnapshot? = nil, currentRequest: TransferRequest? = nil,
        progressEvent: (type: EventType, data: [String: JSONValue])? = nil
    ) {
        self.lease = lease
        self.bytesReceived = bytesReceived
        self.bytesSent = bytesSent
        self.bytesExpectedToReceive = bytesExpectedToReceive
        self.bytesExpectedToSend = bytesExpectedToSend
        self.checkpoint = checkpoint
        self.response = response
        self.currentRequest = currentRequest
        self.progressEvent = progressEvent
    }
}

public struct HeartbeatResult: Sendable {
    /// Leases this instance no longer holds (expired and taken over, or the task ended elsewhere):
    /// their transfers must stop at once without writing anything more.
    public var lost: Set<LeaseToken> = []
    /// Transfers the tenant asked to stop (suspend or cancel).
    public var stopRequests: [LeaseToken: TaskLifecycle.StopReason] = [:]
    /// Other instances that heartbeat within a lease's length: those that could take this
    /// one's leases over should they lapse.
    public var otherLiveInstances = 0
}

extension TransferLedger {
    /// Renews this instance's leases, records progress and checkpoints, appends the coalesced
    /// progress events, and reports lost leases and pending stop requests — in one transaction
    /// and a fixed number of statements however many transfers run.
    public func heartbeat(_ transfers: [TransferProgress], workers: Int, version: String) async throws -> HeartbeatResult {
        let instanceID = self.instanceID
        let leaseSeconds = self.leaseSeconds
        let transfers = transfers.sorted { $0.lease.taskID < $1.lease.taskID }
        let ids = transfers.map(\.lease.taskID)
        let epochs = transfers.map(\.lease.epoch)
        let received = transfers.map(\.bytesReceived)
        let sent = transfers.map(\.bytesSent)
        let expectedReceive = transfers.map(\.bytesExpectedToReceive)
        let expectedSend = transfers.map(\.bytesExpectedToSend)
        let checkpoints = try transfers.map { try $0.checkpoint.map { try JSONColumn.encode($0).text } }
        let responses = try transfers.map { try $0.response.map { try JSONColumn.encode($0).text } }
        let requests = try transfers.map { try $0.currentRequest.map { try JSONColumn.encode($0).text } }
        let progressEvents = Dictionary(transfers.compactMap { transfer in transfer.progressEvent.map { (transfer.lease, $0) } }) { first, _ in first }

        return try await pool.withTransaction { connection in
            let otherLiveInstances = try connection.query(
                """
                INSERT INTO instances (id, workers, running_transfers, version) VALUES ($1, $2, $3, $4)
                ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), workers = $2, running_transfers = $3, version = $4
                RETURNING (SELECT count(*) FROM instances WHERE id <> $1 AND heartbeat_at > now() - make_interval(secs => $5))
                """,
                [instanceID, workers, transfers.count, version, leaseSeconds]
            ).firstRow().decode(0, as: Int64.self)
            var result = HeartbeatResult()
            result.otherLiveInstances = Int(otherLiveInstances)
            guard !transfers.isEmpty else { return result }
            // Locked in id order first, as an ending transfer's write and a session's
            // invalidation lock tasks: the UPDATE alone locks them in whatever order its plan
            // reads them, and deadlocked with finishTasksAndInvalidate. NO KEY UPDATE, as the
            // UPDATE's own lock: events inserted for these tasks meanwhile need not wait.
            try connection.execute("SELECT 1 FROM tasks WHERE id = ANY($1) AND lease_owner = $2 ORDER BY id FOR NO KEY UPDATE", [ids, instanceID])
            let renewed = try connection.query(
                """
                UPDATE tasks t SET
                    lease_expires_at = now() + make_interval(secs => $2),
                    bytes_received = u.received, bytes_sent = u.sent,
                    bytes_expected_to_receive = u.expected_receive, bytes_expected_to_send = u.expected_send,
                    checkpoint = coalesce(u.checkpoint::jsonb, t.checkpoint),
                    owner_losses = \(TransferLedger.ownerLosses(after: "u.checkpoint::jsonb")),
                    response = coalesce(u.response::jsonb, t.response),
                    current_request = coalesce(u.request::jsonb, t.current_request),
                    updated_at = now()
                FROM unnest($3::text[], $4::int8[], $5::int8[], $6::int8[], $7::int8[], $8::int8[], $9::text[], $10::text[], $11::text[])
                     AS u(id, epoch, received, sent, expected_receive, expected_send, checkpoint, response, request)
                WHERE t.id = u.id AND t.lease_epoch = u.epoch AND t.lease_owner = $1
                RETURNING t.id, t.lease_epoch, t.stop_reason, t.tenant_id, t.session_id
                """,
                [instanceID, leaseSeconds, ids, epochs, received, sent, expectedReceive, expectedSend, checkpoints, responses, requests]
            )
            var held: Set<LeaseToken> = []
            // Progress events only for the transfers whose leases were renewed.
            var events = EventBatch()
            for row in renewed {
                let lease = LeaseToken(taskID: try row.decode("id"), epoch: try row.decode("lease_epoch"))
                held.insert(lease)
                if let reason = try row.decode("stop_reason", as: String?.self).flatMap(TaskLifecycle.StopReason.init) {
                    result.stopRequests[lease] = reason
                }
                if let event = progressEvents[lease] {
                    let ref = EventWriter.TaskRef(tenantID: try row.decode("tenant_id"), sessionID: try row.decode("session_id"), taskID: lease.taskID)
                    events.append(event.type, for: ref, data: event.data)
                }
            }
            try events.flush(on: connection)
            result.lost = Set(transfers.map(\.lease)).subtracting(held)
            return result
        }
    }
}
