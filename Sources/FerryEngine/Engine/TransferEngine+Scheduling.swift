import Curl
import FerryCore
import FerryStore
import Foundation

extension TransferEngine {
    /// Claims work whenever there may be some: a task became runnable anywhere (NOTIFY), a slot
    /// freed up here, or a second passed (for delayed tasks and retries coming due).
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
            let free = book.withLock { $0.isStopping ? 0 : configuration.capacity - $0.heldCount }
            guard free > 0 else { return }
            let limit = min(free, 200)
            let claims: [ClaimedTask]
            do {
                claims = try await ledger.claim(limit: limit)
            } catch {
                logger.warning("claiming tasks failed", metadata: ["error": "\(error)"])
                return
            }
            for claim in claims {
                await dispatch(claim)
            }
            if claims.count < limit { return }
        }
    }

    private func dispatch(_ claim: ClaimedTask) async {
        let job: TransferJob
        do {
            job = try await makeJob(claim)
        } catch {
            logger.error("cannot prepare a claimed task", metadata: ["task": "\(claim.taskID)", "error": "\(error)"])
            let placeholder = TransferJob(
                claim: claim, partialName: nil, partialPath: nil, uploadFilePath: nil,
                addressPolicy: configuration.addressPolicy, maximumDataBytes: configuration.maximumDataBytes,
                userAgent: configuration.userAgent
            )
            let failure = TransferError(code: .cannotCreateFile, failingURL: claim.originalRequest.url, reason: "the task's files cannot be prepared")
            reportSink.yield(.ended(EndedTransfer.notStarted(placeholder, end: .failed(failure))))
            return
        }
        let url = claim.checkpoint?.url ?? claim.originalRequest.url
        let host = HostKey(sessionID: claim.sessionID, host: (try? CurlURL(parsing: url).host) ?? url)
        let limit = claim.configuration.httpMaximumConnectionsPerHost
        let admission = book.withLock { $0.admit(job, host: host, limit: limit) }
        if case .start(let worker) = admission {
            workers.withLock { $0[worker] }.send(.start(job))
        }
    }

    private func makeJob(_ claim: ClaimedTask) async throws -> TransferJob {
        let files = self.files
        let tenantID = claim.tenantID
        var partialName: String?
        var partialPath: String?
        if claim.kind == .download {
            let name = claim.checkpoint?.partialFile ?? TenantFiles.partialName(taskID: claim.taskID)
            partialName = name
            partialPath = try files.path(.partial, tenantID: tenantID, name: name)
        }
        var uploadFilePath: String?
        if case .blob(let blobID) = claim.uploadSource {
            uploadFilePath = try files.path(.blobs, tenantID: tenantID, name: blobID)
        }
        try await ensureTenantDirectories(tenantID)
        return TransferJob(
            claim: claim, partialName: partialName, partialPath: partialPath, uploadFilePath: uploadFilePath,
            addressPolicy: configuration.addressPolicy, maximumDataBytes: configuration.maximumDataBytes,
            userAgent: configuration.userAgent
        )
    }

    private func ensureTenantDirectories(_ tenantID: String) async throws {
        let files = self.files
        try await blocking.run { try files.createDirectories(tenantID: tenantID) }
    }

    /// Stops a transfer held here, wherever it is (on a worker, or waiting for a slot).
    func stop(taskID: String, _ end: TransferEnd) {
        if let job = book.withLock({ $0.removeWaiting(taskID: taskID) }) {
            reportSink.yield(.ended(EndedTransfer.notStarted(job, end: end)))
            return
        }
        guard let worker = book.withLock({ $0.worker(of: taskID) }) else { return }
        workers.withLock { $0[worker] }.send(.stop(taskID: taskID, end))
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

    /// Takes over the tasks of instances that stopped renewing their leases.
    func runReaper() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.reaperInterval)
            do {
                let reaped = try await ledger.reapExpiredLeases(resumeData: resumeData)
                if reaped > 0 { logger.info("took over expired leases", metadata: ["count": "\(reaped)"]) }
            } catch {
                logger.warning("reaping expired leases failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
