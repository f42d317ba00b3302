import Curl
import FerryCore
import FerryStore
import Foundation

extension TransferEngine {
    /// Claims work whenever there may be some: a task became runnable anywhere (NOTIFY), an end
    /// was written here (the capacity bell), or a second passed (for delayed tasks and retries
    /// coming due).
    func runScheduler() async {
        let (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in self.hub.subscribe(to: NotificationChannel.work) { wake.yield() }
            }
            group.addTask {
                for await _ in self.capacityRings { wake.yield() }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    wake.yield()
                }
            }
            group.addTask {
                for await _ in wakeups {
                    if self.book.withLock({ $0.isStopping }) { break }
                    await self.claimWhileCapacity()
                }
            }
            wake.yield()
            await group.next()
            group.cancelAll()
        }
    }

    private func claimWhileCapacity() async {
        while !Task.isCancelled {
            // The claim counts as dispatching from before it is sent, decided under the lock that
            // shutdown sets `isStopping` with: a shutdown that begins while it runs waits for what
            // it leases (each must start or be handed back) instead of leaving the leases to expire.
            let free = book.withLock { book -> Int in
                guard !book.isStopping else { return 0 }
                let free = configuration.capacity - book.heldCount
                if free > 0 { dispatching.add(1, ordering: .acquiringAndReleasing) }
                return free
            }
            guard free > 0 else { return }
            let limit = min(free, 200)
            let claims: [ClaimedTask]
            // Before the claim is sent: its leases hold a lease's length from after this.
            let claimedAt = ContinuousClock.now
            do {
                claims = try await ledger.claim(limit: limit)
            } catch {
                dispatching.subtract(1, ordering: .acquiringAndReleasing)
                logger.warning("claiming tasks failed", metadata: ["error": "\(error)"])
                return
            }
            // The claim's one reservation becomes one per task it leased.
            dispatching.add(claims.count - 1, ordering: .acquiringAndReleasing)
            preparing.withLock { $0.formUnion(claims.map(\.taskID)) }
            // Each waits for its files and its URL cache lookup: side by side. They are admitted
            // in claim order (priority, then age), which decides who waits for a connection,
            // each as soon as it and every claim before it are ready: not all after the slowest.
            await withTaskGroup(of: (Int, TransferJob?).self) { group in
                for (index, claim) in claims.enumerated() {
                    group.addTask { (index, await self.prepare(claim, claimedAt: claimedAt)) }
                }
                // By claim index; a nil job (handed back, or failed while preparing) is ready
                // too, hence updateValue: a subscript assignment of nil would drop the entry.
                var prepared: [Int: TransferJob?] = [:]
                var next = 0
                for await (index, job) in group {
                    prepared.updateValue(job, forKey: index)
                    while let ready = prepared.removeValue(forKey: next) {
                        if let ready { admit(ready) }
                        next += 1
                    }
                }
            }
            // Each is in the book now, or has ended (and is finalising, or written).
            preparing.withLock { $0.subtract(claims.map(\.taskID)) }
            dispatching.subtract(claims.count, ordering: .acquiringAndReleasing)
            if claims.count < limit { return }
        }
    }

    /// The claim's job, ready to start; nil when it ended without a transfer (reported here).
    private func prepare(_ claim: ClaimedTask, claimedAt: ContinuousClock.Instant) async -> TransferJob? {
        var job: TransferJob
        do {
            job = try await makeJob(claim)
            job.heldSince = claimedAt
        } catch {
            logger.error("cannot prepare a claimed task", metadata: ["task": "\(claim.taskID)", "error": "\(error)"])
            let placeholder = TransferJob(
                claim: claim, partialName: nil, partialPath: nil, uploadFilePath: nil,
                addressPolicy: configuration.addressPolicy, maximumDataBytes: configuration.maximumDataBytes,
                userAgent: configuration.userAgent
            )
            let failure = TransferError(code: .cannotCreateFile, failingURL: claim.originalRequest.url, reason: "the task's files cannot be prepared")
            reportSink.yield(.ended(EndedTransfer.notStarted(placeholder, end: .failed(failure))))
            return nil
        }
        subscribe(&job)
        // libcurl gets the client key already decrypted: never a key derivation on a worker.
        job.claim.configuration = await clientKeys.prepare(job.claim.configuration)
        if let (decision, context) = await urlCache.decide(for: job, cookies: job.claim.cookies) {
            job.cache = context
            switch decision {
            case .useCached:
                reportSink.yield(.ended(.answeredFromCache(job)))
                return nil
            case .failNotCached:
                var error = TransferError(
                    code: CacheLookup.notCachedError, failingURL: claim.originalRequest.url,
                    reason: "the cache policy forbids loading and the URL cache has no response for this request"
                )
                // Not the network's doing: a background session must not retry it for minutes.
                error.isFinal = true
                reportSink.yield(.ended(.notStarted(job, end: .failed(error))))
                return nil
            case .revalidate, .fetch:
                break
            }
        }
        return await openPartialFile(of: job)
    }

    /// The job with its download's partial file opened on the blocking pool (a worker's curl
    /// loop must not wait for the disk); nil when the file cannot be opened (reported here).
    private func openPartialFile(of job: TransferJob) async -> TransferJob? {
        guard job.claim.kind == .download, let path = job.partialPath else { return job }
        let (finishedPaths, checkpoint) = (job.finishedPaths, job.claim.checkpoint)
        do {
            var job = job
            job.partialFile = try await blocking.run { try OpenedPartialFile.open(at: path, finishedPaths: finishedPaths, checkpoint: checkpoint) }
            return job
        } catch let failure as FileFailure {
            if !failure.isBusy {
                logger.error("cannot open a transfer's file", metadata: ["task": "\(job.taskID)", "error": "\(failure)"])
            }
            reportSink.yield(.ended(.notStarted(job, end: failure.transferEnd(failingURL: job.claim.originalRequest.url))))
        } catch {
            // Only a stopped pool throws anything else (CancellationError): the instance is going away.
            reportSink.yield(.ended(.notStarted(job, end: .handedBackUnstarted)))
        }
        return nil
    }

    /// Starts the job, keeps it waiting for a connection to its host, or, once shutdown has
    /// begun, hands it back.
    private func admit(_ job: TransferJob) {
        let claim = job.claim
        let url = claim.checkpoint?.url ?? claim.originalRequest.url
        let host = HostKey(sessionID: claim.sessionID, host: (try? CurlURL(parsing: url).host) ?? url)
        let limit = claim.configuration.httpMaximumConnectionsPerHost
        // Preparing waits (files, the URL cache): shutdown may have begun since the claim.
        switch book.withLock({ $0.admit(job, host: host, limit: limit) }) {
        case .start(let worker):
            workers.withLock { $0[worker] }.send(.start(job))
        case .wait:
            break
        case .refused:
            reportSink.yield(.ended(EndedTransfer.notStarted(job, end: .handedBackUnstarted)))
        case .heldUnder(let older):
            // Claimed again while the transfer of a lease taken over from this instance still
            // runs here: that one stops (it writes nothing more), this one is tried again in a
            // moment, as when the partial file is still held elsewhere.
            logger.warning("a task claimed again is still held here under its lapsed lease; stopping that transfer", metadata: [
                "task": "\(job.taskID)", "lease": "\(older.epoch)", "claimed": "\(job.lease.epoch)",
            ])
            stop(taskID: job.taskID, lease: older, .leaseLost)
            reportSink.yield(.ended(EndedTransfer.notStarted(job, end: .fileBusy)))
        }
    }

    private func makeJob(_ claim: ClaimedTask) async throws -> TransferJob {
        var claim = claim
        if claim.configuration.kind == .ephemeral {
            claim.cookies = ephemeralCookies.jar(ofSession: claim.sessionID)
        }
        let files = self.files
        let tenantID = claim.tenantID
        var partialName: String?
        var partialPath: String?
        var finishedPaths: [String] = []
        // Data tasks too: a delegate may turn one into a download (`becomeDownload`).
        if claim.kind != .upload {
            let name = claim.checkpoint?.partialFile ?? TenantFiles.partialName(taskID: claim.taskID)
            partialName = name
            partialPath = try files.path(.partial, tenantID: tenantID, name: name)
            // Where an owner that died between renaming the finished file and recording the end
            // left it: under this task's name (finishing is always renamed there), or, after
            // resume data was adopted, under the name of the task that wrote the partial file (a
            // default session's task is completed with resume data naming its partial file then).
            var writers = [claim.taskID]
            if let writer = TenantFiles.taskID(ofPartialName: name), writer != claim.taskID { writers.append(writer) }
            finishedPaths = try writers.map { try files.path(.downloads, tenantID: tenantID, name: TenantFiles.downloadName(taskID: $0)) }
        }
        var uploadFilePath: String?
        var streamDirectory: String?
        if case .blob(let blobID) = claim.uploadSource {
            uploadFilePath = try files.path(.blobs, tenantID: tenantID, name: blobID)
        } else if claim.uploadSource == .stream {
            streamDirectory = try files.directory(.streams, tenantID: tenantID)
        }
        try await folders.ensure(tenantID)
        return TransferJob(
            claim: claim, partialName: partialName, partialPath: partialPath, finishedPaths: finishedPaths,
            uploadFilePath: uploadFilePath, streamDirectory: streamDirectory,
            addressPolicy: configuration.addressPolicy, maximumDataBytes: configuration.maximumDataBytes,
            userAgent: configuration.userAgent, diskSpace: configuration.diskSpace, memory: memory
        )
    }

    /// Stops a transfer held here, wherever it is (on a worker, or waiting for a slot); with
    /// `lease`, only that lease's.
    func stop(taskID: String, lease: LeaseToken? = nil, _ end: TransferEnd) {
        if let job = book.withLock({ $0.removeWaiting(taskID: taskID, lease: lease) }) {
            reportSink.yield(.ended(EndedTransfer.notStarted(job, end: end)))
            return
        }
        guard let worker = book.withLock({ $0.worker(of: taskID, lease: lease) }) else { return }
        workers.withLock { $0[worker] }.send(.stop(taskID: taskID, lease: lease, end))
    }

    /// A reset session's memory-only state (ephemeral cookies, cache, credentials) is dropped everywhere,
    /// and its transfers here go on without cookies and credentials, on new connections.
    func runResetListener() async {
        for await signal in hub.subscribe(to: NotificationChannel.sessionReset) {
            guard case .notification(let payload) = signal,
                  let renewal = SessionRenewal(payload: payload, resetsStorage: true) else { continue }
            forgetMemory(ofSession: renewal.sessionID)
            renew(renewal)
        }
    }

    /// An invalidated session's memory-only state is dropped everywhere: an ephemeral session
    /// leaves nothing behind but its task records.
    func runInvalidationListener() async {
        for await signal in hub.subscribe(to: NotificationChannel.sessionInvalidated) {
            guard case .notification(let sessionID) = signal else { continue }
            forgetMemory(ofSession: sessionID)
        }
    }

    private func forgetMemory(ofSession sessionID: String) {
        ephemeralCookies.forgetSession(sessionID)
        urlCache.forgetSession(sessionID)
        ephemeralCredentials.forgetSession(sessionID)
        for worker in workers.withLock({ $0 }) { worker.send(.forgetSession(sessionID)) }
    }

    /// A flushed session's downloads here are checkpointed at the next heartbeat, whatever
    /// they received since the last one, and its next exchanges use new connections.
    func runFlushListener() async {
        for await signal in hub.subscribe(to: NotificationChannel.sessionFlush) {
            guard case .notification(let payload) = signal,
                  let renewal = SessionRenewal(payload: payload, resetsStorage: false) else { continue }
            flushingSessions.withLock { _ = $0.insert(renewal.sessionID) }
            renew(renewal)
        }
    }

    /// Hands a session's renewal to the jobs waiting for a slot and to every worker.
    private func renew(_ renewal: SessionRenewal) {
        book.withLock { $0.renewWaiting(renewal) }
        for worker in workers.withLock({ $0 }) { worker.send(.renew(renewal)) }
    }

    /// Stop requests sent by other instances' API handlers for transfers this instance runs.
    func runControlListener() async {
        for await signal in hub.subscribe(to: NotificationChannel.control) {
            guard case .notification(let payload) = signal else { continue }
            let parts = payload.split(separator: " ").map(String.init)
            guard parts.count == 3, parts[1] == configuration.instanceID,
                  let reason = TaskLifecycle.StopReason(rawValue: parts[2])
            else { continue }
            stop(taskID: parts[0], .stopped(reason))
        }
    }

    /// Task counts for `/metrics`, refreshed every few seconds (each instance reports the same
    /// cluster-wide numbers).
    func runStatistics() async {
        while !Task.isCancelled {
            if let counts = try? await statistics.counts() {
                for state in TaskState.allCases {
                    for kind in TaskKind.allCases {
                        EngineMetrics.tasks(state: state, kind: kind).record(counts.byStateAndKind[state]?[kind] ?? 0)
                    }
                }
                EngineMetrics.queueDepth.record(counts.queueDepth)
            }
            try? await Task.sleep(for: .seconds(10))
        }
    }

    /// Reconciles the data folder with the database at start and then hourly.
    func runReconciler() async {
        let reconciler = StorageReconciler(files: files, storage: storage, blocking: blocking, logger: logger)
        while !Task.isCancelled {
            do {
                _ = try await reconciler.reconcile()
            } catch {
                logger.warning("reconciling the data folder failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    /// Takes over the tasks of instances that stopped renewing their leases.
    func runReaper() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.reaperInterval)
            do {
                // This instance's own lapsed leases too, of tasks it holds no more in any way: not
                // being prepared, running or waiting, not being finalised, nothing of theirs left
                // to write (read in that order, the order a task goes through them). Read before
                // the statement: a task claimed meanwhile has a lease that has not lapsed.
                let holding = preparing.withLock { Array($0) } + book.withLock { $0.taskIDs }
                    + finalizing.withLock { $0.keys.map(\.taskID) } + writer.tasksWithUnwrittenWrites
                let reaped = try await ledger.reapExpiredLeases(resumeData: resumeData, holding: holding)
                if reaped > 0 {
                    EngineMetrics.leaseTakeovers.increment(by: reaped)
                    logger.info("took over expired leases", metadata: ["count": "\(reaped)"])
                }
            } catch {
                logger.warning("reaping expired leases failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
