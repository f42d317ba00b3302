import FerryCore
import FerryStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// An instance's transfer engine: claims runnable tasks from PostgreSQL under leases, runs them
/// on dedicated worker threads (one curl multi handle each), renews leases and checkpoints on
/// a heartbeat, and records every outcome. A `Service`: a graceful shutdown checkpoints and
/// hands back every running transfer before `run()` returns.
public final class TransferEngine: Service, Sendable {
    let configuration: EngineConfiguration
    let ledger: TransferLedger
    let storage: StorageReferences
    let statistics: TaskStatistics
    let files: TenantFiles
    let resumeData: ResumeDataIssuer
    let hub: NotificationHub
    /// Where decision events are answered (the webhooks); nil: every decision takes the default.
    let gateway: (any DecisionGateway)?
    let logger: Logger
    let writer: LedgerWriter
    let blocking: BlockingPool
    /// Decrypts encrypted client keys on a thread of its own before transfers reach a worker.
    let clientKeys = ClientKeys()
    let directorySyncs: DirectorySyncs
    let book: Mutex<EngineBook>
    let workers = Mutex<[TransferWorker]>([])
    let reports: AsyncStream<WorkerReport>
    let reportSink: AsyncStream<WorkerReport>.Continuation
    /// Rung when a transfer's end is written (or dropped unwritten), when its lease stops counting
    /// against its host and tenant, so the scheduler claims again without waiting for a tick.
    let capacityBell: AsyncStream<Void>.Continuation
    let capacityRings: AsyncStream<Void>
    /// Ephemeral sessions' cookies: in this instance's memory only, as URLSession keeps them.
    let ephemeralCookies = EphemeralCookieJars()
    /// Ephemeral sessions' credentials, shared with this process's API.
    let ephemeralCredentials: EphemeralCredentials
    let urlCache: URLCacheCoordinator
    /// Sessions flushed since the last heartbeat: it checkpoints all their downloads.
    let flushingSessions = Mutex<Set<String>>([])
    /// Data tasks' bodies, process-wide (see `MemoryBudget`).
    public let memory: MemoryBudget
    /// Outcomes being finalised (files synced and renamed, `willCacheResponse` asked) but not yet
    /// queued for writing, with their last progress: heartbeats renew their leases too. A long
    /// fsync or a slow receiver could otherwise outlast the lease, and the task be claimed and run
    /// again (here, or by another instance) while its first run's end was about to be written.
    let finalizing = Mutex<[LeaseToken: TransferProgress]>([:])
    /// The transfers whose snapshot a heartbeat took and has not queued for writing yet.
    let beatsInProgress = BeatsInProgress()
    /// Whether, at the last heartbeat written, other instances were alive that could take this
    /// one's leases over should they lapse (`runLeaseWatch`). Unknown before it: assumed.
    let othersMayTakeOver = Atomic<Bool>(true)
    /// Claimed tasks being prepared (`dispatching` counts them): their leases are this
    /// instance's, though they are in the book not yet (see `runReaper`).
    let preparing = Mutex<Set<String>>([])
    /// Claimed tasks being prepared, not yet started, waiting or reported ended.
    let dispatching = Atomic<Int>(0)
    let folders: TenantFolders

    public init(
        configuration: EngineConfiguration, database: FerryDatabase, hub: NotificationHub,
        resumeData: ResumeDataIssuer, gateway: (any DecisionGateway)? = nil, logger: Logger
    ) {
        self.gateway = gateway
        self.configuration = configuration
        self.ledger = database.transfers(instanceID: configuration.instanceID, leaseDuration: configuration.leaseDuration)
        self.storage = database.storage
        self.statistics = database.statistics
        self.ephemeralCredentials = database.ephemeralCredentials
        self.files = TenantFiles(dataDirectory: configuration.dataDirectory)
        self.resumeData = resumeData
        self.hub = hub
        self.logger = logger
        let (capacityRings, capacityBell) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        (self.capacityRings, self.capacityBell) = (capacityRings, capacityBell)
        let decisionTimeout = configuration.decisionTimeout
        let claimTerms = gateway.map { gateway in { @Sendable in gateway.claimTerms(timeout: decisionTimeout) } }
        self.writer = LedgerWriter(
            ledger: ledger, cookies: database.cookies, workers: configuration.workerCount, version: configuration.version, logger: logger,
            resumeData: resumeData, claimTerms: claimTerms, deliveriesMade: { gateway?.deliveriesMade(forEndpoints: $0) },
            patienceWhenStopping: configuration.shutdownGracePeriod,
            finished: { capacityBell.yield() }
        )
        self.blocking = BlockingPool(name: "ferry-files", threadCount: configuration.fileThreadCount)
        self.directorySyncs = DirectorySyncs(blocking: blocking)
        self.folders = TenantFolders(files: files, blocking: blocking)
        self.urlCache = URLCacheCoordinator(
            store: database.cache, files: files, folders: folders, blocking: blocking, logger: logger,
            ephemeralCapacity: Int64(configuration.memoryBudgetBytes / 4)
        )
        self.memory = MemoryBudget(capacity: configuration.memoryBudgetBytes - configuration.memoryBudgetBytes / 4)
        self.book = Mutex(EngineBook(workerCount: configuration.workerCount))
        (reports, reportSink) = AsyncStream<WorkerReport>.makeStream()
    }

    /// How often the worker threads woke from waiting, in all (see `TransferWorker.wakeupCount`).
    public var workerWakeups: Int {
        workers.withLock { $0.reduce(0) { $0 + $1.wakeupCount } }
    }

    /// Whether the workers are up (for `/readyz`).
    public var isRunning: Bool {
        let count = workers.withLock { $0.count }
        return count == configuration.workerCount && !book.withLock { $0.isStopping }
    }

    public func run() async throws {
        let sink = reportSink
        let started = try (0..<configuration.workerCount).map { index in
            try TransferWorker(index: index, report: { sink.yield($0) }, logger: logger)
        }
        workers.withLock { $0 = started }
        do {
            let reaped = try await ledger.reapLeasesOfPreviousLife(resumeData: resumeData)
            if reaped > 0 { logger.notice("took back the transfers of this instance's previous process", metadata: ["count": "\(reaped)"]) }
        } catch {
            logger.warning("taking back this instance's previous leases failed; they expire instead", metadata: ["error": "\(error)"])
        }
        logger.info("transfer engine started", metadata: [
            "instance": "\(configuration.instanceID)", "workers": "\(configuration.workerCount)",
        ])

        let (loopsStop, stopLoops) = AsyncStream<Void>.makeStream()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.writer.run() }
            group.addTask {
                await self.consumeReports()
                // Only once every report is recorded: an outcome still being recorded when the
                // grace period ends (a checkpoint's fsync behind others, a decision about caching)
                // is written late rather than refused by a stopped writer and lost.
                self.writer.stop()
            }
            group.addTask {
                // The periodic loops run until the shutdown has handed back every transfer.
                await withTaskGroup(of: Void.self) { loops in
                    loops.addTask { await self.runHeartbeats() }
                    loops.addTask { await self.runLeaseWatch() }
                    loops.addTask { await self.runScheduler() }
                    loops.addTask { await self.runControlListener() }
                    loops.addTask { await self.runPriorityListener() }
                    loops.addTask { await self.runResetListener() }
                    loops.addTask { await self.runFlushListener() }
                    loops.addTask { await self.runInvalidationListener() }
                    loops.addTask { await self.runStatistics() }
                    loops.addTask { await self.runReaper() }
                    if self.configuration.reconcilesStorage { loops.addTask { await self.runReconciler() } }
                    for await _ in loopsStop {}
                    loops.cancelAll()
                }
            }
            // Until the service group shuts down (or is cancelled).
            try? await gracefulShutdown()
            await handBackTransfers()
            stopLoops.finish()
            // Every worker ends what it still runs (it was told to stop them all) and reports it
            // before the reports' stream closes: an end reported after that would be dropped,
            // with its checkpoint, when the grace period ran out first.
            for worker in workers.withLock({ $0 }) { await worker.exit() }
            reportSink.finish()
        }
        blocking.shutdown()
        clientKeys.shutdown()
        logger.info("transfer engine stopped", metadata: ["instance": "\(configuration.instanceID)"])
    }

    /// Stops claiming and stops every transfer (checkpointing downloads), then waits, within the
    /// grace period, until their outcomes are written. Heartbeats go on meanwhile, so leases
    /// stay held until each task is handed back.
    private func handBackTransfers() async {
        let waitingJobs = book.withLock { book in
            book.isStopping = true
            return book.removeAllWaiting()
        }
        capacityBell.finish()
        for job in waitingJobs {
            reportSink.yield(.ended(EndedTransfer.notStarted(job, end: .handedBackUnstarted)))
        }
        for worker in workers.withLock({ $0 }) { worker.send(.stopAll(.shuttingDown)) }

        let deadline = ContinuousClock.now + configuration.shutdownGracePeriod
        writer.giveUpFailingWrites(at: deadline)
        while ContinuousClock.now < deadline {
            let busy = book.withLock { $0.heldCount } > 0 || !finalizing.withLock { $0.isEmpty }
                || dispatching.load(ordering: .acquiring) > 0 || !writer.isIdle
            if !busy { return }
            // The writer takes no more writes: the engine was cancelled (a service beside it
            // failed; the writer then stops at once), or it gave up what was left while the
            // database stayed away. No end still waiting will be written.
            if writer.refusesWrites {
                logger.warning("transfers were not all handed back: the ledger writer has stopped; their leases will expire")
                return
            }
            // Not `try? await Task.sleep`: once the engine is cancelled that returns at once, and
            // this loop spun through the whole grace period.
            await Task.detached { try? await Task.sleep(for: .milliseconds(20)) }.value
        }
        logger.warning("shutdown grace period ended before every transfer was handed back; their leases will expire")
    }

    /// Every report of every worker, in order: events go to the writer; ended transfers are
    /// finalised (concurrently: one large fsync must not hold up the others) and then written.
    /// A discarding group: this one lives as long as the engine, and a plain task group keeps
    /// every finished child until it is awaited, which nothing here does.
    private func consumeReports() async {
        await withDiscardingTaskGroup { group in
            for await report in reports {
                switch report {
                case .event(let event):
                    writer.enqueue(.events([event]))
                case .decision(let request):
                    // Queued here, in the report's order, so it comes before the transfer's
                    // next events; only the receiver's answer is awaited apart.
                    guard request.asksReceiver else {
                        writer.enqueue(.events([request.event.decidedByDefault]))
                        continue
                    }
                    let claim = writer.enqueueClaiming(request.event)
                    group.addTask { await self.askReceiver(request, claim: await claim.value()) }
                case .cookies(let update, let handling, let sessionKind):
                    if sessionKind == .ephemeral {
                        ephemeralCookies.apply(update, handling: handling)
                    } else {
                        writer.enqueue(.cookies([update]))
                    }
                case .ended(let ended):
                    // Counted as finalizing before it leaves the book: a shutdown that saw it in
                    // neither (it polls both from another thread) stopped the writer before this
                    // transfer's checkpoint was written, and the restarted download began again.
                    finalizing.withLock { $0[ended.job.lease] = ended.lastProgress }
                    transferLeftWorker(ended.job.lease)
                    group.addTask {
                        await self.record(ended)
                        // Queued for writing: heartbeats, queued after it, must not renew it.
                        _ = self.finalizing.withLock { $0.removeValue(forKey: ended.job.lease) }
                    }
                }
            }
        }
    }

    /// Frees the transfer's slot and starts a job that waited for it. The scheduler is woken
    /// later, by the capacity bell, once the end is written.
    private func transferLeftWorker(_ lease: LeaseToken) {
        if let (job, worker) = book.withLock({ $0.release(lease) }) {
            workers.withLock { $0[worker] }.send(.start(job))
        }
    }
}

extension EndedTransfer {
    /// What a heartbeat records for it while it is finalised: the transfer's last figures.
    var lastProgress: TransferProgress {
        TransferProgress(
            lease: job.lease, bytesReceived: bytesReceived, bytesSent: bytesSent,
            bytesExpectedToReceive: bytesExpectedToReceive, bytesExpectedToSend: job.claim.bytesExpectedToSend
        )
    }

    /// A job the URL cache answers without a transfer.
    static func answeredFromCache(_ job: TransferJob) -> EndedTransfer {
        var ended = notStarted(job, end: .finished)
        ended.notModified = true
        var transaction = TransactionMetrics(request: job.claim.originalRequest, response: nil, resourceFetchType: .localCache)
        transaction.fetchStartDate = Date()
        transaction.responseEndDate = Date()
        ended.metrics = TaskMetrics(taskInterval: .init(start: Date(), duration: 0), redirectCount: 0, transactionMetrics: [transaction])
        return ended
    }

    /// A claimed job that ended before reaching a worker.
    static func notStarted(_ job: TransferJob, end: TransferEnd) -> EndedTransfer {
        EndedTransfer(
            job: job, end: end, response: nil, currentRequest: job.claim.originalRequest, file: nil,
            fileWasAlreadyComplete: false, responseBody: nil, bytesReceived: job.claim.checkpoint?.bytesOnDisk ?? 0,
            bytesSent: 0, bytesExpectedToReceive: transferSizeUnknown, validator: job.claim.checkpoint?.validator,
            expectedTotalBytes: job.claim.checkpoint?.expectedTotalBytes,
            metrics: TaskMetrics(taskInterval: .init(start: Date(), duration: 0), redirectCount: 0, transactionMetrics: [])
        )
    }
}
