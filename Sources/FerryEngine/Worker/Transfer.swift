import Curl
import FerryCore
import FerryStore
import Foundation

/// One task's transfer on a worker thread: a chain of HTTP exchanges (redirects, a resume
/// retried without `Range`) on one curl easy handle, ending in an `EndedTransfer`.
///
/// Confined to the worker thread that owns it; curl calls it back from `CurlMulti.perform()`.
final class Transfer: CurlTransferDelegate {
    /// Changes only when the session's `flush` or `reset` reaches the transfer.
    var job: TransferJob
    let easy: CurlEasy
    let taskStarted = Date()
    let report: (WorkerReport) -> Void

    // The exchange under way.
    var request: TransferRequest
    var sendsBody: Bool
    var redirectCount = 0
    var hopStarted = Date()
    var heads = ResponseHeadAccumulator()
    var role: HopRole = .undecided
    var usesProxy = false
    /// The exchange goes through an HTTP proxy's `CONNECT` tunnel whose answer has not come yet:
    /// heads that arrive meanwhile are the proxy's, not the origin's.
    var awaitsTunnel = false
    /// The proxy's last answer to this exchange's `CONNECT`.
    var tunnelHead: ResponseHead?
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
    /// What the current exchange's 206 says it appends: its body is held to it.
    var resumedRange: ResumedRange?
    /// Whether `downloadTask.didResumeAtOffset` told the delegate of an offset this transfer
    /// may still abandon (see `Transfer.acceptAsFinal`).
    var announcedResumeOffset = false
    /// How many times this transfer asked for the rest after a 206 that ended before the resource.
    var rangeContinuations = 0
    /// Set when such a request was answered with neither the rest nor a new whole: the transfer
    /// ends with it, the file kept.
    var continuationRefusal: TransferError?

    /// Where the current exchange's body started (a superseding response rewinds to it).
    var exchangeStartBytes: Int64 = 0
    /// The credential the current exchange answers a challenge with, and those already tried.
    var challengeResponse: (user: String, password: String, scheme: AuthenticationChallenge.Scheme)?
    var triedCredentialIDs: Set<String> = []
    var challengeRounds = 0
    /// The client certificate a delegate answered with, and whether it was asked for one.
    var delegateClientCertificate: DelegateClientCertificate?
    var hasAskedForClientCertificate = false
    /// The credential a delegate answered the proxy's 407 with, and the proxy's challenge rounds.
    var proxyChallengeResponse: (user: String, password: String, scheme: AuthenticationChallenge.Scheme)?
    var proxyChallengeRounds = 0
    /// The decision this transfer waits for, if any.
    var pendingDecision: PendingDecision?
    /// Its event's id: only the answer to that event resolves it. Answers are routed by task,
    /// and a late one to an earlier transfer of the task (suspended and resumed meanwhile)
    /// must not decide this one's.
    var pendingDecisionEventID: String?
    /// A redirect's body, kept only when the delegate decides redirects (stopping at one makes
    /// the redirect response, body included, the task's response).
    var redirectBody: [UInt8] = []
    /// Bytes of the current exchange's body that are not the task's (a redirect's, a 416's):
    /// at most `maximumDroppedBodyBytes` are read, so an endless one cannot hold the transfer.
    var droppedBodyBytes = 0
    /// The exchange was ended after `maximumDroppedBodyBytes` of such a body: not a failure.
    var isDroppedBodyCut = false
    /// `dataTask.didReceiveResponse` answered `becomeDownload`.
    var becameDownload = false
    /// How much of `body` went out in `dataTask.didReceiveData` events.
    var dataReported = 0
    /// The body being received is a challenge's (a 401, or the proxy's 407): it goes out as
    /// data only if it turns out to be the task's response (at the end), not while the
    /// challenge may still be answered and the body replaced.
    var holdsBackData = false
    /// A download's `bytesReceived` at the last heartbeat snapshot: the heartbeat's
    /// `downloadTask.didWriteData` events have reported up to there.
    var writeDataReported: Int64?
    /// `bytesSent` as the last `task.didSendBodyData` carried it (0: none yet), and when.
    var sendReported: Int64 = 0
    var sendReportedAt = ContinuousClock.now

    /// The session's cookies, as of the transfer's start plus what its own responses set.
    var cookies: CookieJar

    /// The header fields of the current exchange, for the URL cache's `Vary`.
    var sentHeaders: [String: String] = [:]
    /// When the current exchange started and its final head arrived (the cache's age maths).
    var responseTime = Date()
    /// A conditional request was answered 304: the cached entry is the response.
    var notModified = false

    // What the task has sent.
    var uploadBody: UploadBodyReader?
    var bytesSent: Int64 = 0
    /// A streamed body: the task asked the client for a body stream and waits for it to start.
    var isWaitingForBody = false
    /// A streamed body: curl waits for bytes the client has not sent yet.
    var isReadPaused = false
    /// The body stream the next `requestBodyStream()` asks for.
    private var nextBodyStreamGeneration = 1

    /// When a download next asks whether the disk has room (see `DiskSpace`).
    var nextSpaceCheck: Int64 = 0
    var ranOutOfSpace = false
    /// A data task's share of the process's memory budget, as its body grows.
    var bodyReservation: MemoryBudget.Reservation?

    // Why it must end, when the reason is ours rather than curl's.
    var failure: TransferError?
    var refusal: String?
    var stopRequest: TransferEnd?
    var restartsWithoutRange = false

    // What the heartbeat has already reported.
    var responseReported = false
    var currentRequestReported = true

    /// The most body bytes one `dataTask.didReceiveData` event carries.
    static let maximumDataPerEvent = 256 * 1024
    /// The most of a redirect's (or other dropped) body read, and kept for a delegate that may
    /// stop at the redirect.
    static let maximumDroppedBodyBytes = 1024 * 1024

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
        self.cookies = job.claim.cookies
        // After a suspend, a retry or a takeover, the streams asked for before are spent (the
        // API refuses a stream again under a generation it already has): the claim counted the
        // one this transfer asks for first, and the API takes a body for it from then on.
        self.nextBodyStreamGeneration = max(1, job.claim.bodyStreamGeneration)
        self.easy.delegate = self
    }

    var lease: LeaseToken { job.lease }

    /// Takes the body to send, and the download's partial file that the engine opened; continues
    /// from the file's checkpoint when it has one.
    func prepare() throws {
        if let body = try UploadBodyReader(job: job) {
            uploadBody = body
            if body.isStreamed { requestBodyStream() }
        }
        guard let opened = job.partialFile else { return }
        file = opened.file
        if let checkpoint = opened.resumingFrom, let validator = checkpoint.validator {
            resumeRequest = (checkpoint.bytesOnDisk, validator)
            // The checkpoint's URL may be where redirects led: credentials stay with their origin.
            if !CurlURL.isSameOrigin(request.url, checkpoint.url) { request = request.withoutCredentials }
            request.url = checkpoint.url
            self.validator = validator
            expectedTotalBytes = checkpoint.expectedTotalBytes
            bytesReceived = checkpoint.bytesOnDisk
        }
    }

    /// `task.needNewBodyStream`: the task needs the body (again) and waits for the client to
    /// stream it with `PUT /v1/tasks/{id}/body`. URLSession asks for a new stream whenever the
    /// body must be sent again (a 307/308, an authentication round), since a stream cannot rewind.
    func requestBodyStream() {
        guard let uploadBody, uploadBody.isStreamed else { return }
        let generation = nextBodyStreamGeneration
        nextBodyStreamGeneration += 1
        uploadBody.beginStream(generation: generation)
        isWaitingForBody = true
        isReadPaused = false
        // The client has `timeoutIntervalForRequest` from now to start sending.
        lastActivity = .now
        emit(.taskNeedNewBodyStream, ["generation": .number(Double(generation))])
    }

    /// Whether a waiting transfer can start its exchange: the client began sending the body.
    var bodyStreamHasStarted: Bool {
        uploadBody?.spool?.hasStarted ?? true
    }

    /// Whether a paused read would now make progress.
    var bodyStreamCanProgress: Bool {
        uploadBody?.spool?.canProgress ?? true
    }

    func emit(_ type: EventType, _ data: [String: JSONValue]) {
        report(.event(OwnerEvent(lease: lease, type: type, data: data)))
    }

    /// The request body's bytes sent in this exchange, from curl's count: a streamed body goes out
    /// chunked, so its own bytes count, not curl's (which include the framing).
    func bodyBytesSent(curlCount uploaded: Int64) -> Int64 {
        uploadBody?.isStreamed == true ? (uploadBody?.offset ?? 0) : uploaded
    }

    /// `task.didSendBodyData`, from the worker as the body goes out: at most one a second while it
    /// does, and what is left when the final response arrives (`force`), before
    /// `didReceiveResponse` as in URLSession. Heartbeats carried it before; a body sent between two
    /// had none, and an event sent from here raced one of an earlier snapshot (written after it,
    /// that one had a smaller total). A new exchange (after a 307 or 308, or a challenge) sends
    /// the body again and counts from 0.
    func reportBodySent(force: Bool) {
        guard sendsBody, bytesSent > 0, bytesSent != sendReported else { return }
        let now = ContinuousClock.now
        guard force || now - sendReportedAt >= .seconds(1) else { return }
        let expected = uploadBody?.length ?? job.claim.bytesExpectedToSend
        emit(.taskDidSendBodyData, TransferEngine.sendBodyDataPayload(sent: bytesSent, previously: sendReported, expected: expected))
        (sendReported, sendReportedAt) = (bytesSent, now)
    }

    /// The transfer's state for a heartbeat; marks what it reports as reported.
    func snapshot() -> TransferSnapshot {
        var snapshot = TransferSnapshot(
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
        if job.claim.kind == .download { writeDataReported = bytesReceived }
        if job.receivesData, file == nil, !holdsBackData, body.count > dataReported {
            // At most a heartbeat's worth per event; the rest follows on the next beats or at the end.
            let end = min(body.count, dataReported + Self.maximumDataPerEvent)
            snapshot.newData = Array(body[dataReported..<end])
            snapshot.newDataOffset = Int64(dataReported)
            dataReported = end
        }
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
            responseBody: job.claim.kind == .download || becameDownload ? nil : body,
            bytesReceived: bytesReceived,
            bytesSent: bytesSent,
            bytesExpectedToReceive: bytesExpectedToReceive,
            validator: validator,
            expectedTotalBytes: expectedTotalBytes,
            metrics: taskMetrics,
            finalHead: heads.completed,
            sentHeaders: sentHeaders,
            requestTime: hopStarted,
            responseTime: responseTime,
            notModified: notModified,
            becameDownload: becameDownload,
            dataReported: dataReported,
            writeDataReported: writeDataReported,
            sendReported: sendReported,
            ranOutOfSpace: ranOutOfSpace,
            bodyReservation: bodyReservation
        )
    }
}
