import FerryCore
import FerryStore
import Foundation

extension TransferEngine {
    /// Turns an ended transfer into what is written: the policy decides (complete, release for
    /// a retry, or nothing), the files are settled first (synced and renamed, or removed), and
    /// the outcome joins the ordered write queue.
    func record(_ ended: EndedTransfer) async {
        // A heartbeat that took this transfer's snapshot carries data and progress the end's own
        // events continue from: queued after its end, it would find the lease gone and drop them.
        await beatsInProgress.queued(ended.job.lease)
        let claim = ended.job.claim
        let policy = TransferEndPolicy(
            sessionKind: claim.configuration.kind,
            waitsForConnectivity: claim.configuration.waitsForConnectivity,
            retry: configuration.retryPolicy
        )
        recordMetrics(of: ended)
        var random = SystemRandomNumberGenerator()
        let disposition = policy.disposition(
            for: ended.end, attempt: ended.job.attempt, hasAnnouncedWaiting: ended.job.claim.isConnectivityWaitAnnounced,
            now: Date(), resourceDeadline: claim.resourceDeadline, using: &random
        )
        switch disposition {
        case .abandon:
            // Nothing is written, so the writer will not ring: the slot is free now.
            capacityBell.yield()
            return
        case .release(let notBefore, let isWaitingForConnectivity):
            // In the release's transaction, which counts the failed attempt: a claim looks for
            // the event only in tasks with failed attempts (`isConnectivityWaitAnnounced`).
            let waiting = isWaitingForConnectivity ? [OwnerEvent(lease: ended.job.lease, type: .taskIsWaitingForConnectivity, data: [:])] : []
            // Out of space, a retry starts over: the partial file would hold the disk full meanwhile.
            let checkpoint = ended.ranOutOfSpace ? nil : await checkpoint(of: ended)
            if ended.ranOutOfSpace { await removePartialFile(of: ended) }
            // Only a failure retried counts as an attempt; a suspend, a shutdown or a busy file does not.
            let failed = if case .failed = ended.end { true } else { false }
            writer.enqueue(.finish([(ended.job.lease, .released(
                checkpoint: checkpoint, notBefore: notBefore,
                bytesReceived: checkpoint?.bytesOnDisk ?? 0, bytesSent: 0, countsAsAttempt: failed
            ))], after: waiting))
        case .complete(let policyError, let attachesResumeData):
            // The transfer's last progress and data come before anything about its end, and are
            // written in the end's transaction.
            var lastEvents = [Self.lastSendBodyDataEvent(of: ended), Self.lastWriteDataEvent(of: ended)].compactMap { $0 }
                + DataEvents.remainder(of: ended)
            let cachedBody = holdCachedBody(of: ended)
            var completion: TaskCompletion
            if let refusal = cachedBody?.refusal {
                completion = TaskCompletion(error: refusal, metrics: try? JSONValue(encoding: ended.metrics))
            } else {
                completion = await self.completion(of: ended, error: policyError, attachesResumeData: attachesResumeData)
                if ended.notModified {
                    let told: [OwnerEvent]
                    (completion, told) = await answeredFromCache(completion, of: ended)
                    lastEvents += told
                }
            }
            defer { withExtendedLifetime(cachedBody?.reservation) {} }
            // A data task's `willCacheResponse` comes before its `didCompleteWithError` (and
            // after its last data), so its response is stored before the end is queued. A
            // download's is stored after: nothing its delegate hears depends on it, and the next
            // transfer of its connection need not wait. An ephemeral session's, in memory, is
            // stored first too: once its last end is written the session may be invalidated and
            // its memory dropped, and nothing may be stored after that.
            let storesResponse = Self.storesResponse(of: ended, completion)
            let storesFirst = claim.kind != .download || claim.configuration.kind == .ephemeral
            if storesResponse, storesFirst {
                if !lastEvents.isEmpty { writer.enqueue(.events(lastEvents)) }
                lastEvents = []
                await updateCache(after: ended, downloadFile: completion.downloadFile, deferred: false)
            }
            await removeBodyStreams(of: ended.job)
            writer.enqueue(.finish([(ended.job.lease, .completed(completion))], after: lastEvents))
            if storesResponse, !storesFirst { await updateCache(after: ended, downloadFile: completion.downloadFile, deferred: true) }
        }
    }

    /// A fetched response (not a 304 answered from the cache) whose body was kept.
    static func storesResponse(of ended: EndedTransfer, _ completion: TaskCompletion) -> Bool {
        guard case .finished = ended.end, !ended.notModified else { return false }
        return completion.downloadFile != nil || completion.responseBody != nil
    }

    private func completion(of ended: EndedTransfer, error policyError: TransferError?, attachesResumeData: Bool) async -> TaskCompletion {
        let claim = ended.job.claim
        let failingURL = ended.currentRequest.url
        var completion = TaskCompletion(
            response: ended.response,
            currentRequest: ended.currentRequest,
            bytesReceived: ended.bytesReceived,
            bytesSent: ended.bytesSent,
            bytesExpectedToReceive: ended.bytesExpectedToReceive,
            metrics: try? JSONValue(encoding: ended.metrics)
        )
        var error: TransferError? = policyError
        switch ended.end {
        case .finished:
            if ended.notModified, let context = ended.job.cache, let entry = context.entry {
                return await cachedCompletion(of: ended, entry: entry, key: context.key, base: completion)
            }
            if claim.kind == .download || ended.becameDownload {
                do {
                    completion.downloadFile = try await finalizeDownload(ended)
                    completion.becameDownload = ended.becameDownload
                } catch {
                    return downloadFailure(error, ended: ended)
                }
            } else {
                completion.responseBody = ended.responseBody ?? []
            }
            return completion
        case .failed(let failure):
            error = failure
        case .stopped(.cancel), .stopped(.cancelProducingResumeData):
            error = TransferError(code: .cancelled, failingURL: failingURL)
        case .shuttingDown, .handedBackUnstarted:
            error = TransferError(code: .networkConnectionLost, failingURL: failingURL, reason: "the Ferry instance running this transfer shut down")
        case .stopped(.suspend), .leaseLost, .fileBusy:
            break
        }
        // A download stopped by a full disk keeps no resume data: its partial file goes, so the
        // disk recovers by itself instead of staying full for every tenant.
        if attachesResumeData, claim.kind == .download, !ended.ranOutOfSpace, let checkpoint = await checkpoint(of: ended) {
            let token = resumeData.token(tenantID: claim.tenantID, taskID: claim.taskID, originalRequest: claim.originalRequest, checkpoint: checkpoint)
            error?.resumeData = token
            // The partial file stays only while resume data refers to it.
            completion.checkpoint = token == nil ? nil : checkpoint
        }
        if completion.checkpoint == nil {
            await removePartialFile(of: ended)
        }
        completion.error = error
        return completion
    }

    /// URLSession calls `didWriteData` for every write; Ferry coalesces them to one a heartbeat,
    /// so a download that ends between two beats (or in less than one) reports its last bytes here,
    /// before `didFinishDownloadingTo`.
    static func lastWriteDataEvent(of ended: EndedTransfer) -> OwnerEvent? {
        guard case .finished = ended.end, ended.file != nil, !ended.notModified else { return nil }
        let previous = ended.writeDataReported ?? ended.job.claim.checkpoint?.bytesOnDisk ?? 0
        guard ended.bytesReceived > previous else { return nil }
        return OwnerEvent(
            lease: ended.job.lease, type: .downloadTaskDidWriteData,
            data: writeDataPayload(written: ended.bytesReceived - previous, total: ended.bytesReceived, expected: ended.bytesExpectedToReceive)
        )
    }

    /// The same for an upload's body, should any still have gone out after its final response
    /// (the worker reports the rest when the response arrives: `Transfer.reportBodySent`).
    static func lastSendBodyDataEvent(of ended: EndedTransfer) -> OwnerEvent? {
        guard case .finished = ended.end, ended.bytesSent > 0, ended.bytesSent != ended.sendReported else { return nil }
        return OwnerEvent(
            lease: ended.job.lease, type: .taskDidSendBodyData,
            data: sendBodyDataPayload(sent: ended.bytesSent, previously: ended.sendReported, expected: ended.job.claim.bytesExpectedToSend)
        )
    }

    /// `task.didSendBodyData`'s arguments. A new exchange (after a 307 or 308, or a challenge)
    /// sends the body again from its start: its bytes count from 0, never as a negative step.
    static func sendBodyDataPayload(sent: Int64, previously: Int64, expected: Int64) -> [String: JSONValue] {
        [
            "bytesSent": .number(Double(sent >= previously ? sent - previously : sent)),
            "totalBytesSent": .number(Double(sent)),
            "totalBytesExpectedToSend": .number(Double(expected)),
        ]
    }

    /// `downloadTask.didWriteData`'s arguments.
    static func writeDataPayload(written: Int64, total: Int64, expected: Int64) -> [String: JSONValue] {
        ["bytesWritten": .number(Double(written)), "totalBytesWritten": .number(Double(total)), "totalBytesExpectedToWrite": .number(Double(expected))]
    }

    private func recordMetrics(of ended: EndedTransfer) {
        let outcome = switch ended.end {
        case .finished: ended.notModified ? "cache" : "finished"
        case .failed: "failed"
        case .stopped: "stopped"
        case .shuttingDown, .handedBackUnstarted: "shutdown"
        case .leaseLost: "lease_lost"
        case .fileBusy: "file_busy"
        }
        let resumedAt = ended.job.claim.checkpoint?.bytesOnDisk ?? 0
        EngineMetrics.bytesReceived.increment(by: max(0, ended.bytesReceived - resumedAt))
        EngineMetrics.bytesSent.increment(by: max(0, ended.bytesSent))
        let metrics = EngineMetrics.transfersEnded(kind: ended.job.claim.kind, outcome: outcome)
        metrics.count.increment()
        metrics.duration.recordNanoseconds(Int64(ended.metrics.taskInterval.duration * 1_000_000_000))
    }

    /// A response the URL cache answers: without a transfer, or after a 304 confirmed it.
    private func cachedCompletion(of ended: EndedTransfer, entry stored: CachedResponse, key: String, base: TaskCompletion) async -> TaskCompletion {
        let claim = ended.job.claim
        var completion = base
        var entry = stored
        if let head = ended.finalHead, head.statusCode == 304 {
            guard let merged = CacheRevalidation.merge(stored: stored, notModified: head, requestTime: ended.requestTime, now: Date()) else {
                return TaskCompletion(error: TransferError(
                    code: .badServerResponse, failingURL: ended.currentRequest.url,
                    reason: "the origin answered 304 for a representation other than the cached one"
                ), metrics: base.metrics)
            }
            entry = merged
            await urlCache.replace(merged, key: key, claim: claim)
        }
        do {
            let body = try await urlCache.body(of: entry, for: claim)
            completion.response = entry.responseSnapshot(now: Date())
            completion.bytesReceived = Int64(body.count)
            completion.bytesExpectedToReceive = Int64(body.count)
            if claim.kind == .download {
                completion.downloadFile = try await writeDownload(body, ended: ended)
            } else {
                completion.responseBody = body
            }
            return completion
        } catch {
            logger.warning("a cached response could not be read", metadata: ["task": "\(claim.taskID)", "error": "\(error)"])
            return TaskCompletion(error: TransferError(
                code: .resourceUnavailable, failingURL: ended.currentRequest.url, reason: "the cached response's body is no longer available"
            ), metrics: base.metrics)
        }
    }

    /// Stores a cacheable response and applies an unsafe method's invalidation.
    /// `deferred`: the end is queued already and nothing waits on the store.
    private func updateCache(after ended: EndedTransfer, downloadFile: String?, deferred: Bool) async {
        await urlCache.invalidate(after: ended)
        guard ended.job.cache != nil else { return }
        var body = ended.responseBody.map(URLCacheCoordinator.Body.bytes)
        if let downloadFile, let path = try? files.path(.downloads, tenantID: ended.job.claim.tenantID, name: downloadFile) {
            body = .file(path: path, size: ended.bytesReceived)
        }
        if let body { await urlCache.storeIfAllowed(ended, body: body, deferred: deferred) { await self.mayCache($0, for: ended) } }
    }

    /// A finished download whose bytes came from the cache: written and renamed into place like any other.
    func writeDownload(_ body: [UInt8], ended: EndedTransfer) async throws -> String {
        guard let partialPath = ended.job.partialPath else { throw FileFailure(operation: "open", path: ended.job.taskID, errno: 2) }
        let transferFile = ended.file
        return try await placeDownload(of: ended.job) { destination in
            // The transfer's own file (a 304 leaves it empty) holds the lock; reuse it.
            let file = try transferFile ?? PartialFile(path: partialPath, keeping: 0)
            try file.truncateToZero()
            try body.withUnsafeBytes { try file.append($0) }
            return try FileOperations.settle(file, to: destination, expectedSize: Int64(body.count))
        }
    }

    func downloadFailure(_ error: any Error, ended: EndedTransfer) -> TaskCompletion {
        logger.error("finishing a download failed", metadata: ["task": "\(ended.job.taskID)", "error": "\(error)"])
        let outOfSpace = (error as? FileFailure)?.isOutOfSpace == true
        return TaskCompletion(
            error: TransferError(code: .cannotWriteToFile, failingURL: ended.currentRequest.url, reason: outOfSpace ? "the server's disk is full" : nil),
            bytesReceived: ended.bytesReceived
        )
    }

    /// Syncs a download's partial file and says what is durably in it. A job that never reached
    /// a worker keeps the checkpoint it was claimed with.
    func checkpoint(of ended: EndedTransfer) async -> TransferCheckpoint? {
        guard ended.job.claim.kind == .download else { return nil }
        guard let file = ended.file else { return ended.job.claim.checkpoint }
        guard let validator = ended.validator else { return nil }
        let durable: Int64
        do {
            durable = try await blocking.run { try file.sync() }
        } catch {
            // What came since the last sync may not be on disk, but the checkpoint this transfer
            // started from is (for the same representation): it is kept rather than none, which
            // made the next attempt start over and a default session's shutdown drop the file.
            logger.warning("syncing a download's partial file failed", metadata: ["task": "\(ended.job.taskID)", "error": "\(error)"])
            return ended.job.claim.checkpoint.flatMap { $0.validator == validator ? $0 : nil }
        }
        guard durable > 0 else { return nil }
        return TransferCheckpoint(
            partialFile: ended.job.partialName ?? TenantFiles.partialName(taskID: ended.job.taskID),
            bytesOnDisk: durable, validator: validator, url: ended.currentRequest.url,
            expectedTotalBytes: ended.expectedTotalBytes
        )
    }

    /// fsync, size check, rename into the downloads folder, fsync the folder. Returns the file name.
    private func finalizeDownload(_ ended: EndedTransfer) async throws -> String {
        guard let file = ended.file else { throw FileFailure(operation: "open", path: ended.job.taskID, errno: 2) }
        let expected = ended.expectedTotalBytes
        return try await placeDownload(of: ended.job) { destination in
            try FileOperations.settle(file, to: destination, expectedSize: expected)
        }
    }

    /// Puts the job's download in place under its final name, durably: `settle` (on the blocking
    /// pool) writes, fsyncs and renames it to the destination it is given, then the folder is
    /// synced, shared with renames landing at the same time. Returns the file name.
    private func placeDownload(of job: TransferJob, _ settle: @escaping @Sendable (_ destination: String) throws -> Int64) async throws -> String {
        let name = TenantFiles.downloadName(taskID: job.taskID)
        let destination = try files.path(.downloads, tenantID: job.claim.tenantID, name: name)
        _ = try await blocking.run { try settle(destination) }
        try await directorySyncs.syncFolder(of: destination)
        return name
    }

    /// A streamed upload's spool files, once the task has no more use for them.
    private func removeBodyStreams(of job: TransferJob) async {
        guard let directory = job.streamDirectory else { return }
        let prefix = job.taskID + "."
        _ = try? await blocking.run {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names where name.hasPrefix(prefix) { FileOperations.remove("\(directory)/\(name)") }
        }
    }

    private func removePartialFile(of ended: EndedTransfer) async {
        guard let path = ended.job.partialPath else { return }
        let file = ended.file ?? ended.job.partialFile?.file
        _ = try? await blocking.run {
            // Emptied here first: the file stays open until the transfer's last reference goes,
            // often on the cooperative pool, and the close of an unlinked multi-GB file frees its
            // blocks there (synchronously, on ext4).
            try? file?.truncateToZero()
            FileOperations.remove(path)
        }
    }
}
