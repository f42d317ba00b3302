import FerryCore
import FerryStore
import Foundation

/// What the engine asks of a worker thread.
enum WorkerCommand: Sendable {
    case start(TransferJob)
    /// Stop one transfer for this reason (`.stopped`, `.shuttingDown` or `.leaseLost`).
    case stop(taskID: String, TransferEnd)
    /// Stop every transfer (shutdown).
    case stopAll(TransferEnd)
    /// Report where every transfer stands (for the heartbeat).
    case snapshot(@Sendable ([TransferSnapshot]) -> Void)
}

/// What a worker tells the engine, in the order things happened.
enum WorkerReport: Sendable {
    /// An event to append to the task's log while it runs.
    case event(OwnerEvent)
    /// A transfer ended; the engine decides what to write.
    case ended(EndedTransfer)
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
}
