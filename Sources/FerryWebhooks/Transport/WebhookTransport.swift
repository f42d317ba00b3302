import Curl
import FerryCore
import Foundation
import Logging
import Postgres
import Synchronization

/// A dedicated thread driving one curl multi handle with every webhook request in flight, so a
/// dead endpoint's timeout never holds up another request: each waits only for its own answer.
/// Async callers submit a request and await its result; nothing here blocks the cooperative pool.
final class WebhookTransport: Sendable {
    struct Settings: Sendable {
        var addressPolicy: AddressPolicy
        var userAgent: String
        var connectTimeout: Duration
        var maximumResponseBytes: Int
    }

    struct Submission: Sendable {
        var request: WebhookHTTPRequest
        var reply: @Sendable (WebhookHTTPResult) -> Void
    }

    private struct Inbox {
        var submissions: [Submission] = []
        var isStopping = false
        var hasExited = false
    }

    /// The multi handle moves to the thread at start and never comes back.
    private struct MultiHandoff: @unchecked Sendable {
        let multi: CurlMulti
    }

    private let inbox = Mutex(Inbox())
    private let waker: CurlMultiWaker
    private let exited = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    init(settings: Settings, logger: Logger) throws {
        let multi = try CurlMulti()
        // Idle connections kept for reuse, in each tenant's pool (`connectionPools`).
        try multi.setMaxCachedConnections(64)
        waker = multi.waker
        let handoff = MultiHandoff(multi: multi)
        let thread = Thread { [self] in
            // Named from inside, by the thread itself (see ThreadNaming).
            ThreadNaming.nameCurrentThread("ferry-webhooks")
            WebhookTransportLoop(multi: handoff.multi, transport: self, settings: settings, logger: logger).run()
            let unanswered = inbox.withLock { inbox in
                inbox.hasExited = true
                defer { inbox.submissions.removeAll() }
                return inbox.submissions
            }
            for submission in unanswered { submission.reply(Self.shuttingDown) }
            let waiters = exited.withLock { state in
                state.done = true
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Sends one request and waits for its answer (or its failure; never longer than its timeout).
    func send(_ request: WebhookHTTPRequest) async -> WebhookHTTPResult {
        await withCheckedContinuation { continuation in
            let submission = Submission(request: request) { continuation.resume(returning: $0) }
            let accepted = inbox.withLock { inbox in
                guard !inbox.hasExited, !inbox.isStopping else { return false }
                inbox.submissions.append(submission)
                return true
            }
            if accepted {
                waker.wake()
            } else {
                submission.reply(Self.shuttingDown)
            }
        }
    }

    /// Refuses new requests, lets those in flight finish, and waits for the thread to end.
    func stop() async {
        inbox.withLock { $0.isStopping = true }
        waker.wake()
        await withCheckedContinuation { continuation in
            let done = exited.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    // MARK: For the loop

    fileprivate func takeSubmissions() -> (submissions: [Submission], isStopping: Bool) {
        inbox.withLock { inbox in
            defer { inbox.submissions.removeAll(keepingCapacity: true) }
            return (inbox.submissions, inbox.isStopping)
        }
    }

    static let shuttingDown = WebhookHTTPResult(
        statusCode: nil, retryAfter: nil, body: [], isBodyTruncated: false, failure: .shuttingDown, duration: .zero
    )
}

/// The thread's loop and the state only it touches.
private final class WebhookTransportLoop {
    let multi: CurlMulti
    unowned let transport: WebhookTransport
    let settings: WebhookTransport.Settings
    let logger: Logger
    var exchanges: [ObjectIdentifier: WebhookExchange] = [:]
    /// One connection cache per tenant: a connection one tenant's deliveries opened is never
    /// reused for another's, whose attempts' durations would tell it of the first's traffic.
    /// At most 2 idle pools of 64: 128 idle sockets for tenants without a delivery under way.
    let connectionPools = CurlConnectionPools(idleLimit: 2)

    init(multi: CurlMulti, transport: WebhookTransport, settings: WebhookTransport.Settings, logger: Logger) {
        self.multi = multi
        self.transport = transport
        self.settings = settings
        self.logger = logger
    }

    func run() {
        while true {
            let (submissions, isStopping) = transport.takeSubmissions()
            for submission in submissions { start(submission) }
            connectionPools.sweep(busy: { Set(exchanges.values.map(\.request.tenantID)) })
            if isStopping && exchanges.isEmpty { return }
            do {
                try multi.perform()
                for (easy, result) in multi.completedTransfers() {
                    guard let exchange = exchanges.removeValue(forKey: ObjectIdentifier(easy)) else { continue }
                    // Whatever the removal says, the exchange is over and its sender is answered:
                    // the batch's completions are read once, and one left unanswered waits forever.
                    do { try multi.remove(easy) } catch {
                        logger.error("removing a finished webhook exchange failed", metadata: ["error": "\(error)"])
                    }
                    exchange.finish(curlCode: result)
                }
                try multi.poll(timeoutMilliseconds: 1000)
            } catch {
                // Only misuse or exhausted memory makes the multi interface fail; keep serving.
                logger.error("webhook transport failure", metadata: ["error": "\(error)"])
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    private func start(_ submission: WebhookTransport.Submission) {
        do {
            let exchange = try WebhookExchange(
                request: submission.request, policy: settings.addressPolicy, userAgent: settings.userAgent,
                maximumResponseBytes: settings.maximumResponseBytes, connectTimeout: settings.connectTimeout,
                reply: submission.reply
            )
            try exchange.easy.use(connectionPools.share(for: submission.request.tenantID))
            try multi.add(exchange.easy)
            exchanges[ObjectIdentifier(exchange.easy)] = exchange
        } catch {
            logger.error("cannot start a webhook request", metadata: ["error": "\(error)"])
            submission.reply(WebhookHTTPResult(
                statusCode: nil, retryAfter: nil, body: [], isBodyTruncated: false,
                failure: .transport("internal error starting the request"), duration: .zero
            ))
        }
    }
}
