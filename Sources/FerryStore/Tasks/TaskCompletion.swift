import FerryCore
import Foundation
import Postgres

/// How a task ends, whoever ends it (its owner, or a command when nobody owns it).
public struct TaskCompletion: Sendable {
    public var response: HTTPResponseSnapshot?
    public var currentRequest: TransferRequest?
    public var error: TransferError?
    /// A finished download's file name in the tenant's downloads folder.
    public var downloadFile: String?
    public var bytesReceived: Int64?
    public var bytesSent: Int64?
    public var bytesExpectedToReceive: Int64?
    /// `URLSessionTaskMetrics`, as JSON, when a transfer took place.
    public var metrics: JSONValue?
    /// Where the checkpoint stands after the end: kept for resume data, nil once consumed.
    public var checkpoint: TransferCheckpoint?
    /// The response body of a data or upload task.
    public var responseBody: [UInt8]?
    /// A data task whose delegate answered `becomeDownload`: it is a download task from now on.
    public var becameDownload = false

    public init(
        response: HTTPResponseSnapshot? = nil, currentRequest: TransferRequest? = nil, error: TransferError? = nil,
        downloadFile: String? = nil, bytesReceived: Int64? = nil, bytesSent: Int64? = nil,
        bytesExpectedToReceive: Int64? = nil, metrics: JSONValue? = nil, checkpoint: TransferCheckpoint? = nil,
        responseBody: [UInt8]? = nil
    ) {
        self.response = response
        self.currentRequest = currentRequest
        self.error = error
        self.downloadFile = downloadFile
        self.bytesReceived = bytesReceived
        self.bytesSent = bytesSent
        self.bytesExpectedToReceive = bytesExpectedToReceive
        self.metrics = metrics
        self.checkpoint = checkpoint
        self.responseBody = responseBody
    }

    /// Writes the completion and its events into the caller's transaction, and invalidates the
    /// session when this was the last task it waited for; the task row must be locked.
    func write(_ ref: EventWriter.TaskRef, kind: TaskKind, on connection: PostgresConnection) throws {
        var completions = CompletionBatch()
        var events = EventBatch()
        try write(ref, kind: kind, into: &completions, events: &events, on: connection)
        try completions.flush(on: connection)
        try SessionInvalidation.finishIfLastTasks(ofSessions: [ref.sessionID], events: &events, on: connection)
        try events.flush(on: connection)
    }

    /// Adds the completion to `completions` and its events to `events`, for the caller to flush
    /// before the transaction commits (completions first: the caller then runs
    /// `SessionInvalidation.finishIfLastTasks`, which reads them). Delegate order follows
    /// URLSession: didFinishDownloadingTo, didFinishCollectingMetrics, then didCompleteWithError.
    func write(
        _ ref: EventWriter.TaskRef, kind: TaskKind, into completions: inout CompletionBatch, events: inout EventBatch,
        on connection: PostgresConnection
    ) throws {
        // Encoded once, for the column and the event.
        let responseJSON = try response.map { try JSONValue(encoding: $0) }
        try completions.append(self, response: responseJSON, taskID: ref.taskID)
        if let responseBody {
            if responseBody.count <= CompletionBatch.batchedBodyLimit {
                completions.appendBody(responseBody, taskID: ref.taskID)
            } else {
                try connection.execute(
                    """
                    INSERT INTO task_bodies (task_id, response_body) VALUES ($1, $2)
                    ON CONFLICT (task_id) DO UPDATE SET response_body = EXCLUDED.response_body
                    """,
                    [ref.taskID, responseBody]
                )
            }
        }
        if kind == .download || becameDownload, error == nil, downloadFile != nil {
            events.append(
                .downloadTaskDidFinishDownloadingTo, for: ref, data: ["location": .string("/v1/tasks/\(ref.taskID)/file")]
            )
        }
        if let metrics {
            events.append(.taskDidFinishCollectingMetrics, for: ref, data: ["metrics": metrics])
        }
        var data: [String: JSONValue] = ["error": TaskEventData.error(error)]
        if let responseJSON { data["response"] = responseJSON }
        events.append(.taskDidCompleteWithError, for: ref, data: data)
        events.notify(NotificationChannel.taskCompleted, ref.taskID)
    }
}

/// Completions of one transaction, written by one statement. Small downloads end by the
/// hundred per second, and a statement per completion was a round trip each.
struct CompletionBatch {
    private var taskIDs: [String] = []
    private var errors: [String?] = []
    private var responses: [String?] = []
    private var currentRequests: [String?] = []
    private var downloadFiles: [String?] = []
    private var bytesReceived: [Int64?] = []
    private var bytesSent: [Int64?] = []
    private var bytesExpectedToReceive: [Int64?] = []
    private var checkpoints: [String?] = []
    private var metrics: [String?] = []
    /// "download" for a data task that became one (`becomeDownload`), nil to keep the kind.
    private var kinds: [String?] = []
    /// Response bodies up to `batchedBodyLimit`, written by the completions' statement (a bytea[]):
    /// a statement per body was a round trip of the owner's serial writer per data task
    /// (bench/decisions.sh: six of the seventeen of a typical transaction).
    private var bodyTaskIDs: [String] = []
    private var bodies: [[UInt8]] = []

    /// Bodies larger than this are written on their own, in binary: an array's elements go as
    /// hex text, twice the bytes.
    static let batchedBodyLimit = 64 * 1024

    /// `response` is the completion's, encoded.
    mutating func append(_ completion: TaskCompletion, response: JSONValue?, taskID: String) throws {
        taskIDs.append(taskID)
        errors.append(try JSONColumn.encodeOptional(completion.error)?.text)
        responses.append(response.map { String(decoding: $0.serialized(), as: UTF8.self) })
        currentRequests.append(try JSONColumn.encodeOptional(completion.currentRequest)?.text)
        downloadFiles.append(completion.downloadFile)
        bytesReceived.append(completion.bytesReceived)
        bytesSent.append(completion.bytesSent)
        bytesExpectedToReceive.append(completion.bytesExpectedToReceive)
        checkpoints.append(try JSONColumn.encodeOptional(completion.checkpoint)?.text)
        metrics.append(completion.metrics.map { String(decoding: $0.serialized(), as: UTF8.self) })
        kinds.append(completion.becameDownload ? TaskKind.download.rawValue : nil)
    }

    /// A response body (at most `batchedBodyLimit` bytes) for the task's row in task_bodies.
    mutating func appendBody(_ body: [UInt8], taskID: String) {
        // One row per task: the statement may not write a row twice (a task ends once anyway).
        if let index = bodyTaskIDs.firstIndex(of: taskID) {
            bodies[index] = body
            return
        }
        bodyTaskIDs.append(taskID)
        bodies.append(body)
    }

    /// Writes the completions appended so far and empties the batch. Absent values keep what
    /// the task has (its response, request, byte counts, metrics); the error, the download's
    /// file and the checkpoint are the end's.
    mutating func flush(on connection: PostgresConnection) throws {
        guard !taskIDs.isEmpty else { return }
        defer { self = CompletionBatch() }
        // The bodies with the rows, one statement: a round trip each is what batching saves.
        try connection.execute(
            """
            WITH bodies AS (
                INSERT INTO task_bodies (task_id, response_body)
                SELECT b.task_id, b.body FROM unnest($12::text[], $13::bytea[]) AS b(task_id, body)
                ORDER BY b.task_id
                ON CONFLICT (task_id) DO UPDATE SET response_body = EXCLUDED.response_body
            )
            UPDATE tasks t SET
                state = 'completed', completed_at = now(), updated_at = now(),
                error = c.error::jsonb,
                response = coalesce(c.response::jsonb, t.response),
                current_request = coalesce(c.current_request::jsonb, t.current_request),
                download_file = c.download_file,
                bytes_received = coalesce(c.bytes_received, t.bytes_received),
                bytes_sent = coalesce(c.bytes_sent, t.bytes_sent),
                bytes_expected_to_receive = coalesce(c.bytes_expected_to_receive, t.bytes_expected_to_receive),
                checkpoint = c.checkpoint::jsonb,
                metrics = coalesce(c.metrics::jsonb, t.metrics),
                kind = coalesce(c.kind, t.kind),
                lease_owner = NULL, lease_expires_at = NULL, stop_reason = NULL, not_before = NULL
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::int8[], $8::int8[],
                        $9::text[], $10::text[], $11::text[])
                AS c(id, error, response, current_request, download_file, bytes_received, bytes_sent,
                     bytes_expected_to_receive, checkpoint, metrics, kind)
            WHERE t.id = c.id
            """,
            [
                taskIDs, errors, responses, currentRequests, downloadFiles, bytesReceived, bytesSent,
                bytesExpectedToReceive, checkpoints, metrics, kinds, bodyTaskIDs, bodies,
            ]
        )
    }
}

/// `session.didBecomeInvalidWithError` once an invalidating session's last task has ended.
enum SessionInvalidation {
    /// Run after tasks of these sessions completed in the transaction. `events` (the tasks' last
    /// events) are flushed before a session's: it is the last message.
    static func finishIfLastTasks(ofSessions sessionIDs: Set<String>, events: inout EventBatch, on connection: PostgresConnection) throws {
        guard !sessionIDs.isEmpty else { return }
        // Only invalidating sessions are locked (in id order), which keeps the common path
        // lock-free. The lock serialises the last tasks ending together; the check runs as a
        // statement of its own so it sees, with a fresh snapshot, what the transaction it waited
        // for committed.
        let invalidating = try connection.query(
            "SELECT id, tenant_id FROM sessions WHERE id = ANY($1) AND state IN ('finishing', 'canceling') ORDER BY id FOR UPDATE",
            [sessionIDs.sorted()]
        )
        for session in invalidating {
            let sessionID: String = try session.decode("id")
            let outstanding = try connection.query(
                "SELECT 1 FROM tasks WHERE session_id = $1 AND state <> 'completed' LIMIT 1", [sessionID]
            )
            guard outstanding.isEmpty else { continue }
            try connection.execute(
                "UPDATE sessions SET state = 'invalidated', invalidated_at = now() WHERE id = $1", [sessionID]
            )
            // Instances drop what they keep of it in memory (an ephemeral session's everything).
            try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.sessionInvalidated, sessionID])
            try events.flush(on: connection)
            try EventWriter.appendSessionEvent(
                .sessionDidBecomeInvalidWithError, tenantID: try session.decode("tenant_id"), sessionID: sessionID,
                data: ["error": .null], on: connection
            )
        }
    }
}

extension TaskCompletion {
    /// A task cancelled with no transfer of it running any more: -999, carrying resume data
    /// when the cancel asked for it (`cancelByProducingResumeData`: pass the issuer, else nil)
    /// and the checkpoint allows it. The one rule for an API cancel, the reaper, and an owner
    /// handing a cancelled task back.
    static func cancelled(
        tenantID: String, taskID: String, originalRequest: TransferRequest, currentRequest: TransferRequest?,
        checkpoint: TransferCheckpoint?, resumeData: ResumeDataIssuer?
    ) -> TaskCompletion {
        let token = resumeData?.token(tenantID: tenantID, taskID: taskID, originalRequest: originalRequest, checkpoint: checkpoint)
        return TaskCompletion(
            error: TransferError(code: .cancelled, failingURL: currentRequest?.url ?? originalRequest.url, resumeData: token),
            checkpoint: token == nil ? nil : checkpoint
        )
    }
}
