import Curl
import FerryCore
import FerryStore
import Foundation
import Logging
import Postgres
import Synchronization

/// A dedicated thread driving one curl multi handle: it starts, runs and stops the transfers
/// the engine gives it, and reports what happens. It waits in `curl_multi_poll`, which other
/// threads interrupt with `curl_multi_wakeup`, and otherwise only writes received bytes and
/// reads upload bodies. A download's file arrives already open (the engine creates it on the
/// file pool); a data task that a delegate turns into a download (`becomeDownload`, rare) still
/// creates its file here.
final class TransferWorker: Sendable {
    let index: Int
    /// Commands, and whether the thread has exited (then nobody will read them).
    private let inbox = Mutex<(commands: [WorkerCommand], hasExited: Bool)>(([], false))
    private let waker: CurlMultiWaker
    private let transferCount = Atomic<Int>(0)
    private let wakeups = Atomic<Int>(0)
    private let isExiting = Atomic<Bool>(false)
    private let finished = Mutex<CheckedContinuation<Void, Never>?>(nil)

    /// The multi handle moves to the worker thread at start and never comes back.
    private struct MultiHandoff: @unchecked Sendable {
        let multi: CurlMulti
    }

    init(index: Int, report: @escaping @Sendable (WorkerReport) -> Void, logger: Logger) throws {
        self.index = index
        let multi = try CurlMulti()
        // Connections kept for reuse, in each session's pool (`connectionPools`): enough for a
        // session's many hosts of small-download workloads. curl 7.88 counts those in use too.
        try multi.setMaxCachedConnections(32)
        self.waker = multi.waker
        let handoff = MultiHandoff(multi: multi)
        let thread = Thread { [self] in
            // Named from inside, by the thread itself (see ThreadNaming); at most 15 bytes.
            ThreadNaming.nameCurrentThread("ferry-worker-\(index)")
            TransferWorkerLoop(multi: handoff.multi, worker: self, report: report, logger: logger).run()
            let unanswered = inbox.withLock { inbox in
                inbox.hasExited = true
                defer { inbox.commands.removeAll() }
                return inbox.commands
            }
            for case .snapshot(let reply) in unanswered { reply([]) }
            finished.withLock { $0?.resume(); $0 = nil }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Transfers running on this worker (for choosing the least busy one).
    var load: Int { transferCount.load(ordering: .relaxed) }

    func send(_ command: WorkerCommand) {
        let accepted = inbox.withLock { inbox in
            guard !inbox.hasExited else { return false }
            inbox.commands.append(command)
            return true
        }
        guard accepted else {
            // Nobody will run it: answer what waits for an answer.
            if case .snapshot(let reply) = command { reply([]) }
            return
        }
        waker.wake()
    }

    /// Stops the thread once its transfers are gone; waits for it.
    func exit() async {
        await withCheckedContinuation { continuation in
            finished.withLock { $0 = continuation }
            isExiting.store(true, ordering: .releasing)
            waker.wake()
        }
    }

    // MARK: For the loop

    func takeCommands() -> [WorkerCommand] {
        inbox.withLock { inbox in
            defer { inbox.commands.removeAll(keepingCapacity: true) }
            return inbox.commands
        }
    }

    func setTransferCount(_ count: Int) {
        transferCount.store(count, ordering: .relaxed)
    }

    var shouldExit: Bool { isExiting.load(ordering: .acquiring) }

    /// Times the thread came out of `curl_multi_poll`: an idle worker wakes about once a
    /// second and for each heartbeat, however many transfers wait for a client's body.
    var wakeupCount: Int { wakeups.load(ordering: .relaxed) }

    func countWakeup() {
        wakeups.add(1, ordering: .relaxed)
    }
}

/// The worker thread's loop and the state only it touches.
private final class TransferWorkerLoop {
    let multi: CurlMulti
    unowned let worker: TransferWorker
    let report: @Sendable (WorkerReport) -> Void
    let logger: Logger
    var transfers: [String: Transfer] = [:]
    /// Transfers with a streamed body, which may wait for the client: checked every loop.
    var streaming: [String: Transfer] = [:]
    /// Recent sessions' renewals, by session, in generation order, for jobs claimed before and
    /// started after them (jobs waiting for a slot get theirs in the engine's book).
    var renewals: [String: [SessionRenewal]] = [:]
    static let renewalMemory: TimeInterval = 600
    /// Wakes the loop when a client's body arrives, instead of looking every few milliseconds.
    let streamWatch = BodyStreamWatch()
    /// One connection cache per session, as URLSession keeps one per session. With the multi
    /// handle's one for all, a tenant could learn from its task metrics' `isReusedConnection`, or
    /// from how soon its request went out, which hosts other tenants had just talked to.
    /// At most 8 idle pools of 32: the 256 idle sockets a worker kept before, in one cache.
    let connectionPools = CurlConnectionPools(idleLimit: 8)

    init(multi: CurlMulti, worker: TransferWorker, report: @escaping @Sendable (WorkerReport) -> Void, logger: Logger) {
        self.multi = multi
        self.worker = worker
        self.report = report
        self.logger = logger
    }

    func run() {
        while !(worker.shouldExit && transfers.isEmpty) {
            for command in worker.takeCommands() { handle(command) }
            connectionPools.sweep(busy: { Set(transfers.values.map(\.job.claim.sessionID)) })
            do {
                if !streaming.isEmpty {
                    streamWatch.drain()
                    try resumeStreams()
                    expireStreams()
                }
                try multi.perform()
                // Each completion is handled whatever befalls another: the batch is read from
                // curl once, and a transfer skipped here would never end (nor its lease).
                for (easy, result) in multi.completedTransfers() {
                    guard let transfer = easy.delegate as? Transfer else { continue }
                    do { try multi.remove(easy) } catch {
                        logger.error("removing a finished exchange failed", metadata: ["error": "\(error)", "worker": "\(worker.index)"])
                    }
                    if let end = transfer.exchangeFinished(result: result) {
                        finish(transfer, end)
                    } else {
                        do { try addIfReady(transfer) } catch {
                            finish(transfer, .failed(TransferError(code: .unknown, failingURL: transfer.request.url, reason: "curl refused the next exchange: \(error)")))
                        }
                    }
                }
                worker.setTransferCount(transfers.count)
                // A body arriving from a client is not a socket curl watches: the stream watch's
                // descriptor wakes the poll instead.
                try multi.poll(timeoutMilliseconds: pollTimeout(), alsoWaitingFor: streaming.isEmpty ? nil : streamWatch.descriptor)
                worker.countWakeup()
            } catch {
                // curl's multi interface fails only on misuse or exhausted memory; log it and keep
                // serving rather than spin, so other transfers are not lost with it.
                logger.error("curl multi failure", metadata: ["error": "\(error)", "worker": "\(worker.index)"])
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    /// How long the poll may block: a second, or until the first wait for a client's body times
    /// out; briefly when the stream watch cannot see every folder.
    private func pollTimeout() -> Int {
        guard !streaming.isEmpty else { return 1000 }
        if streamWatch.isBlind { return BodyStreamWatch.fallbackInterval }
        let now = ContinuousClock.now
        var timeout = 1000
        for transfer in streaming.values where transfer.isWaitingForClient {
            timeout = min(timeout, Int(clamping: max(1, (transfer.bodyWaitDeadline - now).wholeMilliseconds + 1)))
        }
        return timeout
    }

    /// Ends with -1001 the transfers whose client sent no body bytes for `timeoutIntervalForRequest`.
    private func expireStreams() {
        let now = ContinuousClock.now
        for transfer in streaming.values where transfer.isWaitingForClient {
            guard let timeout = transfer.bodyWaitTimeout(at: now) else { continue }
            try? multi.remove(transfer.easy)
            finish(transfer, .failed(timeout))
        }
    }

    /// Starts the exchanges whose streamed body began arriving, and wakes reads that can go on.
    private func resumeStreams() throws {
        for transfer in streaming.values where !transfer.isWaitingForDecision {
            if transfer.isWaitingForBody {
                guard transfer.bodyStreamHasStarted else { continue }
                transfer.isWaitingForBody = false
                // curl's connect timeout starts now: so does the idle one, which leaves the
                // connecting to it (see `curlEasy(_:progress:)`).
                transfer.lastActivity = .now
                try multi.add(transfer.easy)
            } else if transfer.isReadPaused, transfer.bodyStreamCanProgress {
                transfer.isReadPaused = false
                try transfer.easy.unpause()
            }
        }
    }


    /// Hands the transfer's handle to curl unless it waits for a body or a delegate's decision;
    /// whoever ends that wait adds it then. Adding a handle twice is an error in curl.
    private func addIfReady(_ transfer: Transfer) throws {
        guard !transfer.isWaitingForBody, !transfer.isWaitingForDecision else { return }
        try multi.add(transfer.easy)
    }
    private func handle(_ command: WorkerCommand) {
        switch command {
        case .start(let job):
            start(job)
        case .stop(let taskID, let lease, let end):
            guard let transfer = transfers[taskID], lease == nil || transfer.job.lease == lease else { return }
            transfer.stopRequest = end
            try? multi.remove(transfer.easy)
            finish(transfer, end)
        case .stopAll(let end):
            for transfer in transfers.values {
                transfer.stopRequest = end
                try? multi.remove(transfer.easy)
                finish(transfer, end)
            }
        case .snapshot(let reply):
            reply(transfers.values.map { $0.snapshot() })
        case .renew(let renewal):
            renewals = renewals.compactMapValues { list in
                let recent = list.filter { $0.renewedAt.timeIntervalSinceNow > -Self.renewalMemory }
                return recent.isEmpty ? nil : recent
            }
            renewals[renewal.sessionID, default: []].append(renewal)
            renewals[renewal.sessionID]?.sort { $0.generation < $1.generation }
            connectionPools.drop(renewal.sessionID)
            for transfer in transfers.values { transfer.apply(renewal) }
        case .forgetSession(let sessionID):
            connectionPools.drop(sessionID)
        case .decided(let taskID, let eventID, let outcome):
            // It ended meanwhile, or this is another transfer of the task, asking something else.
            guard let transfer = transfers[taskID], transfer.pendingDecisionEventID == eventID else { return }
            switch transfer.resolve(outcome) {
            case .none:
                break
            case .resumeBody:
                try? transfer.easy.unpause()
            case .startExchange:
                try? multi.add(transfer.easy)
            case .end(let end):
                try? multi.remove(transfer.easy)
                finish(transfer, end)
            }
        }
    }

    private func start(_ job: TransferJob) {
        let report = self.report
        var job = job
        for renewal in renewals[job.claim.sessionID] ?? [] { _ = job.apply(renewal) }
        do {
            let transfer = try Transfer(job: job) { report($0) }
            transfers[job.taskID] = transfer
            try transfer.easy.use(connectionPools.share(for: job.claim.sessionID))
            do {
                try transfer.prepare()
            } catch let failure as FileFailure {
                if !failure.isBusy {
                    logger.error("cannot open a transfer's file", metadata: ["task": "\(job.taskID)", "error": "\(failure)"])
                }
                finish(transfer, failure.transferEnd(failingURL: job.claim.originalRequest.url))
                return
            }
            if job.claim.resourceDeadline.timeIntervalSinceNow <= 0 {
                finish(transfer, .failed(TransferError(
                    code: .timedOut, failingURL: job.claim.originalRequest.url, reason: "timeoutIntervalForResource elapsed"
                )))
                return
            }
            // Never hand libcurl a key it cannot use safely (sessions stored before the API
            // refused them): 7.88 crashes on an encrypted key without a passphrase.
            if let (field, message) = job.claim.configuration.clientKeyProblem {
                finish(transfer, .failed(TransferError(
                    code: .secureConnectionFailed, failingURL: job.claim.originalRequest.url, reason: "the session's \(field) \(message)"
                )))
                return
            }
            try transfer.configureExchange()
            if transfer.uploadBody?.isStreamed == true, let directory = job.streamDirectory {
                streaming[job.taskID] = transfer
                streamWatch.watch(directory)
            }
            transfer.announceDelayedStart()
            try addIfReady(transfer)
        } catch {
            logger.error("cannot start a transfer", metadata: ["task": "\(job.taskID)", "error": "\(error)"])
            let failure = TransferError(code: .unknown, failingURL: job.claim.originalRequest.url, reason: "internal error starting the transfer")
            if let transfer = transfers[job.taskID] {
                finish(transfer, .failed(failure))
            } else {
                // No transfer was made (libcurl refused a handle): the task still ends, or it
                // would hold its slot and lease until the process exits.
                report(.ended(EndedTransfer.notStarted(job, end: .failed(failure))))
            }
        }
    }

    private func finish(_ transfer: Transfer, _ end: TransferEnd) {
        transfers.removeValue(forKey: transfer.job.taskID)
        if streaming.removeValue(forKey: transfer.job.taskID) != nil, let directory = transfer.job.streamDirectory {
            streamWatch.unwatch(directory)
        }
        report(.ended(transfer.ended(end)))
    }
}
