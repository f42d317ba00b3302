import FerryCore
import FerryStore
import Foundation

/// What the engine asks of a worker thread.
enum WorkerCommand: Sendable {
    case start(TransferJob)
    /// Stop one transfer for this reason (`.stopped`, `.shuttingDown` or `.leaseLost`); with a
    /// lease, only that lease's (another claim of the task may have taken its place meanwhile).
    case stop(taskID: String, lease: LeaseToken?, TransferEnd)
    /// Stop every transfer (shutdown).
    case stopAll(TransferEnd)
    /// Report where every transfer stands (for the heartbeat).
    case snapshot(@Sendable ([TransferSnapshot]) -> Void)
    /// The answer to a transfer's decision event (`eventID`).
    case decided(taskID: String, eventID: String?, DecisionOutcome)
    /// A session's `flush` or `reset`: for its transfers here and those that start later.
    case renew(SessionRenewal)
    /// An invalidated or reset session: its pool is dropped, so its idle connections here close
    /// (running transfers keep theirs until they end).
    case forgetSession(String)
}

/// What a worker tells the engine, in the order things happened.
enum WorkerReport: Sendable {
    /// An event to append to the task's log while it runs.
    case event(OwnerEvent)
    /// A transfer ended; the engine decides what to write.
    case ended(EndedTransfer)
    /// A decision event: written to the log, then (when subscribed) answered by the receiver.
    case decision(DecisionRequest)
    /// A response set cookies: the session's jar must learn them.
    case cookies(CookieUpdate, handling: CookieHandling, sessionKind: SessionKind)
}

/// One running transfer at a heartbeat.
struct TransferSnapshot: Sendable {
    var job: TransferJob
    var bytesReceived: Int64
    var bytesSent: Int64
    var bytesExpectedToReceive: Int64
    var bytesExpectedToSend: Int64
    /// Set the first time after the final response head arrived.
    var newResponse: HTTPResponseSnapshot?
    /// Set the first time after the request changed (a redirect).
    var newCurrentRequest: TransferRequest?
    /// The download's file and what a checkpoint of it would say.
    var file: PartialFile?
    var validator: ResumeValidator?
    var url: String
    var expectedTotalBytes: Int64?
    /// Body bytes not yet sent in `dataTask.didReceiveData` events, and where they start.
    var newData: [UInt8] = []
    var newDataOffset: Int64 = 0
}

/// A transfer that ended on a worker, with everything needed to record it.
struct EndedTransfer: Sendable {
    var job: TransferJob
    var end: TransferEnd
    var response: HTTPResponseSnapshot?
    var currentRequest: TransferRequest
    var file: PartialFile?
    /// A 416 confirmed the file on disk was already complete.
    var fileWasAlreadyComplete: Bool
    var responseBody: [UInt8]?
    var bytesReceived: Int64
    var bytesSent: Int64
    var bytesExpectedToReceive: Int64
    var validator: ResumeValidator?
    var expectedTotalBytes: Int64?
    var metrics: TaskMetrics
    /// For the URL cache: the final response's head, the fields the request went out with,
    /// when it was sent and answered, and whether a conditional request was answered 304.
    var finalHead: ResponseHead? = nil
    var sentHeaders: [String: String] = [:]
    var requestTime = Date()
    var responseTime = Date()
    var notModified = false
    /// A data task whose delegate answered `becomeDownload`: it ends as a download.
    var becameDownload = false
    /// How much of the body `dataTask.didReceiveData` events already carried.
    var dataReported = 0
    /// How much of a download `downloadTask.didWriteData` events already reported (nil: none).
    var writeDataReported: Int64? = nil
    /// The request body's bytes `task.didSendBodyData` events already reported (this exchange's).
    var sendReported: Int64 = 0
    /// The download stopped at the disk's free-space reserve (or a full disk): its partial file
    /// goes, rather than holding the space for resume data.
    var ranOutOfSpace = false
    /// The body's share of the memory budget: held until this end has been recorded.
    var bodyReservation: MemoryBudget.Reservation? = nil
}
