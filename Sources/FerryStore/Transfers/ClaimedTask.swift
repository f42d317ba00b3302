import FerryCore
import Foundation

/// A task an instance has just claimed, with everything its transfer needs.
public struct ClaimedTask: Sendable {
    public var taskID: String
    public var tenantID: String
    public var sessionID: String
    public var kind: TaskKind
    /// The fencing token: every later write of this owner carries it.
    public var leaseEpoch: Int64
    /// How many times the task was claimed before (0 the first time).
    public var previousAttempts: Int
    public var configuration: SessionConfiguration
    public var originalRequest: TransferRequest
    public var requestBody: [UInt8]?
    public var uploadSource: UploadSource?
    public var checkpoint: TransferCheckpoint?
    /// When `timeoutIntervalForResource` runs out, counted from the task's first start.
    public var resourceDeadline: Date
    public var bytesExpectedToSend: Int64
    /// The session's credential storage, for answering authentication challenges.
    public var credentials: [StoredCredential] = []
    /// `earliestBeginDate`, when the task was held back until then.
    public var earliestBeginDate: Date?
    /// Whether an earlier transfer of the task already sent `task.willBeginDelayedRequest`:
    /// URLSession asks once, whatever suspends or restarts came between.
    public var isDelayedStartAnnounced = false
    /// Whether an earlier attempt already sent `task.isWaitingForConnectivity`: URLSession tells
    /// the delegate once per task, whatever failed in between.
    public var isConnectivityWaitAnnounced = false
    /// The tenant's `maxTaskBytes` quota: the most this task may receive.
    public var maxTaskBytes: Int64?
    /// The session's cookies when the transfer started.
    public var cookies = CookieJar()
    /// The task's delegate (its own, else its session's) when it has an active one.
    public var delegate: DelegateSubscription?
    /// The session's connection generation (`flush` and `reset` renew it), and since when it
    /// holds, in this instance's clock: no exchange reuses a connection opened before then.
    public var connectionGeneration: Int64 = 0
    public var connectionsRenewedAt: Date?
    /// `priority` when claimed, and the task's number in its session (its age): the order in
    /// which the tasks waiting here for a connection to one host start. `PATCH` changes the
    /// priority of a waiting task later (`NotificationChannel.priority`).
    public var priority: Double = TaskPriority.default
    public var taskIdentifier: Int64 = 0
    /// The body stream this transfer asks for first (`task.needNewBodyStream`), counted by the
    /// claim: one after those earlier transfers of the task asked for, which are spent.
    public var bodyStreamGeneration = 0

    public init(
        taskID: String, tenantID: String, sessionID: String, kind: TaskKind, leaseEpoch: Int64, previousAttempts: Int,
        configuration: SessionConfiguration, originalRequest: TransferRequest, requestBody: [UInt8]?,
        uploadSource: UploadSource?, checkpoint: TransferCheckpoint?, resourceDeadline: Date, bytesExpectedToSend: Int64,
        maxTaskBytes: Int64? = nil
    ) {
        self.maxTaskBytes = maxTaskBytes
        self.taskID = taskID
        self.tenantID = tenantID
        self.sessionID = sessionID
        self.kind = kind
        self.leaseEpoch = leaseEpoch
        self.previousAttempts = previousAttempts
        self.configuration = configuration
        self.originalRequest = originalRequest
        self.requestBody = requestBody
        self.uploadSource = uploadSource
        self.checkpoint = checkpoint
        self.resourceDeadline = resourceDeadline
        self.bytesExpectedToSend = bytesExpectedToSend
    }
}

/// The lease an owner holds on a task: its writes are fenced by both parts.
public struct LeaseToken: Sendable, Hashable {
    public var taskID: String
    public var epoch: Int64

    public init(taskID: String, epoch: Int64) {
        self.taskID = taskID
        self.epoch = epoch
    }
}
