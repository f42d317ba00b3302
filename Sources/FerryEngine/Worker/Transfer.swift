import Curl
import FerryCore
import FerryStore
import Foundation

/// One task's transfer on a worker thread: a chain of HTTP exchanges (redirects, a resume
/// retried without `Range`) on one curl easy handle, ending in an `EndedTransfer`.
///
/// Confined to the worker thread that owns it; curl calls it back from `CurlMulti.perform()`.
final class Transfer: CurlTransferDelegate {
    let job: TransferJob
    let easy: CurlEasy
    let taskStarted = Date()
    private let report: (WorkerReport) -> Void

    // The exchange under way.
    var request: TransferRequest
    var sendsBody: Bool
    var redirectCount = 0
    var hopStarted = Date()
    var heads = ResponseHeadAccumulator()
    var role: HopRole = .undecided
    var usesProxy = false
    /// When bytes last moved either way: `timeoutIntervalForRequest` is the longest allowed pause.
    var lastActivity = ContinuousClock.now
    var metrics: [TransactionMetrics] = []

    // What the task has received.
    var response: HTTPResponseSnapshot?
    var file: PartialFile?
    var body: [UInt8] = []
    var bytesReceived: Int64 = 0
    var bytesExpectedToReceive: Int64 = transferSizeUnknown
    var validator: ResumeValidator?
    var expectedTotalBytes: Int64?
    var fileWasAlreadyComplete = false
    /// Set while the exchange asks to continue a partial file.
    var resumeRequest: (offset: Int64, validator: ResumeValidator)?

    // What the task has sent.
    var uploadBody: UploadBodyReader?
    var bytesSent: Int64 = 0

    // Why it must end, when the reason is ours rather than curl's.
    var failure: TransferError?
    var refusal: String?
    var stopRequest: TransferEnd?
    var restartsWithoutRange = false

    // What the heartbeat has already reported.
    var responseReported = false
    var currentRequestReported = true

    /// What the current exchange's response is for.
    enum HopRole {
        /// The head has not arrived yet.
        case undecided
        /// The task's response: its body is the task's.
        case final
        /// A redirect to follow: its body is dropped.
        case redirect(to: String)
        /// A response that only confirms what is on disk (416 for a complete file): body dropped.
        case discard
    }

    init(job: TransferJob, report: @escaping (WorkerReport) -> Void) throws {
        self.job = job
        self.easy = try CurlEasy()
        self.report = report
        self.request = job.claim.originalRequest
        self.sendsBody = job.claim.requestBody != nil || job.claim.uploadSource != nil
        self.easy.delegate = self
    }

    var lease: LeaseToken { job.lease }

    /// Opens the partial file of a download, continuing from the checkpoint when there is one.
    func prepare() throws {
        if let body = try UploadBodyReader(job: job) {
            uploadBody = body
        }
        guard job.claim.kind == .download, let path = job.partialPath else { return }
        let checkpoint = job.claim.checkpoint
        if let checkpoint, checkpoint.isResumable, let validator = checkpoint.validator {
            let opened = try PartialFile(path: path, keeping: checkpoint.bytesOnDisk)
            file = opened
            if opened.bytesWritten == checkpoint.bytesOnDisk {
                resumeRequest = (checkpoint.bytesOnDisk, validator)
                request.url = checkpoint.url
                self.validator = validator
                expectedTotalBytes = checkpoint.expectedTotalBytes
                bytesReceived = checkpoint.bytesOnDisk
            } else {
                // Fewer bytes on disk than the checkpoint says: the file cannot be trusted.
                try opened.truncateToZero()
            }
        } else {
            file = try PartialFile(path: path, keeping: 0)
        }
    }

    func emit(_ type: EventType, _ data: [String: JSONValue]) {
        report(.event(OwnerEvent(lease: lease, type: type, data: data)))
    }

    /// The transfer's state for a heartbeat; marks what it reports as reported.
    func snapshot() -> TransferSnapshot {
        let snapshot = TransferSnapshot(
            job: job,
            bytesReceived: bytesReceived,
            bytesSent: bytesSent,
            bytesExpectedToReceive: bytesExpectedToReceive,
            bytesExpectedToSend: uploadBody?.length ?? job.claim.bytesExpectedToSend,
            newResponse: responseReported ? nil : response,
            newCurrentRequest: currentRequestReported ? nil : request,
            file: file,
            validator: validator,
            url: request.url,
            expectedTotalBytes: expectedTotalBytes
        )
        if response != nil { responseReported = true }
        currentRequestReported = true
        return snapshot
    }

    /// The transfer is over: hand everything to the engine.
    func ended(_ end: TransferEnd) -> EndedTransfer {
        easy.delegate = nil
        let taskMetrics = TaskMetrics(
            taskInterval: .init(start: taskStarted, duration: Date().timeIntervalSince(taskStarted)),
            redirectCount: redirectCount,
            transactionMetrics: metrics
        )
        return EndedTransfer(
            job: job,
            end: end,
            response: response,
            currentRequest: request,
            file: file,
            fileWasAlreadyComplete: fileWasAlreadyComplete,
            responseBody: job.claim.kind == .download ? nil : body,
            bytesReceived: bytesReceived,
            bytesSent: bytesSent,
            bytesExpectedToReceive: bytesExpectedToReceive,
            validator: validator,
            expectedTotalBytes: expectedTotalBytes,
            metrics: taskMetrics
        )
    }
}
