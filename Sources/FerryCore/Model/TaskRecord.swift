import Foundation

/// A task as stored: what `GET /v1/tasks/{id}` shows.
public struct TaskRecord: Sendable, Equatable {
    public var id: String
    public var tenantID: String
    public var sessionID: String
    /// `taskIdentifier`: unique within its session, from 1.
    public var taskIdentifier: Int64
    public var kind: TaskKind
    public var state: TaskState
    public var priority: Double
    public var taskDescription: String?
    public var earliestBeginDate: Date?
    public var originalRequest: TransferRequest
    public var currentRequest: TransferRequest?
    public var response: HTTPResponseSnapshot?
    public var countOfBytesReceived: Int64
    public var countOfBytesSent: Int64
    public var countOfBytesExpectedToReceive: Int64
    public var countOfBytesExpectedToSend: Int64
    /// The client's estimates, as given at creation or by PATCH (-1: unknown).
    public var countOfBytesClientExpectsToSend: Int64 = transferSizeUnknown
    public var countOfBytesClientExpectsToReceive: Int64 = transferSizeUnknown
    public var error: TransferError?
    /// Set once a download completed: the file is available.
    public var hasDownloadedFile: Bool
    public var createdAt: Date
    public var startedAt: Date?
    public var completedAt: Date?

    public init(
        id: String, tenantID: String, sessionID: String, taskIdentifier: Int64, kind: TaskKind, state: TaskState,
        priority: Double, taskDescription: String?, earliestBeginDate: Date?, originalRequest: TransferRequest,
        currentRequest: TransferRequest?, response: HTTPResponseSnapshot?, countOfBytesReceived: Int64,
        countOfBytesSent: Int64, countOfBytesExpectedToReceive: Int64, countOfBytesExpectedToSend: Int64,
        error: TransferError?, hasDownloadedFile: Bool, createdAt: Date, startedAt: Date?, completedAt: Date?
    ) {
        self.id = id
        self.tenantID = tenantID
        self.sessionID = sessionID
        self.taskIdentifier = taskIdentifier
        self.kind = kind
        self.state = state
        self.priority = priority
        self.taskDescription = taskDescription
        self.earliestBeginDate = earliestBeginDate
        self.originalRequest = originalRequest
        self.currentRequest = currentRequest
        self.response = response
        self.countOfBytesReceived = countOfBytesReceived
        self.countOfBytesSent = countOfBytesSent
        self.countOfBytesExpectedToReceive = countOfBytesExpectedToReceive
        self.countOfBytesExpectedToSend = countOfBytesExpectedToSend
        self.error = error
        self.hasDownloadedFile = hasDownloadedFile
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.completedAt = completedAt
    }

    /// `progress.fractionCompleted`, as `URLSessionTask.progress` reports it.
    public var fractionCompleted: Double {
        if state == .completed, error == nil { return 1 }
        // In Double: the expected length is the server's Content-Length, up to Int64.max, and
        // an Int64 sum of it would trap on every read of the task.
        let expected = Double(max(countOfBytesExpectedToReceive, 0))
        let toSend = Double(max(countOfBytesExpectedToSend, 0))
        let total = expected + toSend
        guard total > 0 else { return 0 }
        let done = Double(max(countOfBytesReceived, 0)) + Double(max(countOfBytesSent, 0))
        return min(1, done / total)
    }
}
