import FerryCore
import FerryStore
import Foundation

extension TransferEngine {
    /// Every `heartbeatInterval`: renew this instance's leases, record progress (with one
    /// coalesced progress event per task that moved), checkpoint downloads, and act on lost
    /// leases and stop requests.
    func runHeartbeats() async {
        var memory = HeartbeatMemory()
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.heartbeatInterval)
            await heartbeat(&memory)
        }
    }

    private func heartbeat(_ memory: inout HeartbeatMemory) async {
        // What the snapshots report (data, progress) is written by this beat; an end of one of
        // these transfers waits for it to be queued first (`beatsInProgress`).
        beatsInProgress.collecting()
        defer { beatsInProgress.end() }
        let snapshots = await collectSnapshots()
        beatsInProgress.took(snapshots.map(\.job.lease))
        EngineMetrics.runningTransfers.record(snapshots.count)
        let waiting = book.withLock { $0.waitingJobs }
        let flushing = flushingSessions.withLock { sessions in
            defer { sessions.removeAll() }
            return sessions
        }
        var progress: [TransferProgress] = []
        var checkpoints: [(index: Int, file: PartialFile)] = []
        let now = ContinuousClock.now

        for snapshot in snapshots {
            let lease = snapshot.job.lease
            let resumedAt = snapshot.job.claim.checkpoint?.bytesOnDisk ?? 0
            let last = memory.reported[lease] ?? .init(received: resumedAt, checkpointedBytes: resumedAt, checkpointedAt: now)
            let entry = TransferProgress(
                lease: lease,
                bytesReceived: snapshot.bytesReceived, bytesSent: snapshot.bytesSent,
                bytesExpectedToReceive: snapshot.bytesExpectedToReceive, bytesExpectedToSend: snapshot.bytesExpectedToSend,
                response: snapshot.newResponse, currentRequest: snapshot.newCurrentRequest,
                progressEvent: Self.progressEvent(snapshot, since: last)
            )
            if let file = snapshot.file, snapshot.validator != nil {
                let written = file.bytesWritten
                let fresh = written - last.checkpointedBytes
                let isFlushed = fresh > 0 && flushing.contains(snapshot.job.claim.sessionID)
                if isFlushed || Self.isCheckpointDue(fresh: fresh, since: now - last.checkpointedAt) {
                    checkpoints.append((progress.count, file))
                }
            }
            progress.append(entry)
            memory.reported[lease] = .init(
                received: snapshot.bytesReceived,
                checkpointedBytes: last.checkpointedBytes, checkpointedAt: last.checkpointedAt
            )
        }
        for job in waiting {
            progress.append(TransferProgress(
                lease: job.lease, bytesReceived: job.claim.checkpoint?.bytesOnDisk ?? 0, bytesSent: 0,
                bytesExpectedToReceive: job.claim.checkpoint?.expectedTotalBytes ?? transferSizeUnknown,
                bytesExpectedToSend: job.claim.bytesExpectedToSend
            ))
        }
        progress += finalizing.withLock { Array($0.values) }

        // fsync before recording: a checkpoint never claims bytes that are not on disk.
        await withTaskGroup(of: (Int, Int64?).self) { group in
            for (index, file) in checkpoints {
                group.addTask { (index, try? await self.blocking.run { try file.sync() }) }
            }
            for await (index, durable) in group {
                guard let durable else { continue }
                let snapshot = snapshots[index]
                progress[index].checkpoint = TransferCheckpoint(
                    partialFile: snapshot.job.partialName ?? TenantFiles.partialName(taskID: snapshot.job.taskID),
                    bytesOnDisk: durable, validator: snapshot.validator, url: snapshot.url,
                    expectedTotalBytes: snapshot.expectedTotalBytes
                )
                memory.reported[snapshot.job.lease]?.checkpointedBytes = durable
                memory.reported[snapshot.job.lease]?.checkpointedAt = now
            }
        }

        let (result, sentAt) = await withCheckedContinuation { continuation in
            writer.enqueue(.heartbeat(progress, reply: { continuation.resume(returning: ($0, $1)) }))
            beatsInProgress.end()
        }
        let held = Set(progress.map(\.lease))
        memory.reported = memory.reported.filter { held.contains($0.key) }
        guard let result else { return }
        // Renewed by a transaction sent after `sentAt`: each holds a lease's length from then.
        book.withLock { $0.renewed(held.subtracting(result.lost), at: sentAt) }
        othersMayTakeOver.store(result.otherLiveInstances > 0, ordering: .releasing)
        // A transfer that ended while this beat was prepared had its end written first.
        for lease in result.lost where book.withLock({ $0.holds(lease) }) {
            logger.warning("lease lost; stopping the transfer", metadata: ["task": "\(lease.taskID)"])
            stop(taskID: lease.taskID, lease: lease, .leaseLost)
        }
        for (lease, reason) in result.stopRequests {
            stop(taskID: lease.taskID, lease: lease, .stopped(reason))
        }
    }

    private func collectSnapshots() async -> [TransferSnapshot] {
        let workers = self.workers.withLock { $0 }
        return await withTaskGroup(of: [TransferSnapshot].self) { group in
            for worker in workers {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        worker.send(.snapshot({ continuation.resume(returning: $0) }))
                    }
                }
            }
            var all: [TransferSnapshot] = []
            for await part in group { all += part }
            return all
        }
    }

    /// Whether a download's bytes on disk are worth an fsync and a checkpoint now. A crash then
    /// loses at most a few MiB, or two seconds' worth; a slow transfer waits until it has 64 KiB
    /// to save (or half a minute has passed), so ten thousand of them trickling at a few KiB/s
    /// do not mean five thousand fsyncs a second, which held heartbeats up past their leases.
    static func isCheckpointDue(fresh: Int64, since elapsed: Duration) -> Bool {
        guard fresh > 0 else { return false }
        if fresh >= 4 * 1024 * 1024 { return true }
        if elapsed >= .seconds(30) { return true }
        return elapsed >= .seconds(2) && fresh >= 64 * 1024
    }

    /// `dataTask.didReceiveData`, or a download's `downloadTask.didWriteData` with the totals, when bytes moved.
    static func progressEvent(_ snapshot: TransferSnapshot, since last: HeartbeatMemory.Reported) -> (type: EventType, data: [String: JSONValue])? {
        if !snapshot.newData.isEmpty {
            return (.dataTaskDidReceiveData, DataEvents.payload(snapshot.newData, offset: snapshot.newDataOffset))
        }
        if snapshot.job.claim.kind == .download, snapshot.bytesReceived != last.received {
            // A download that started over counts from 0, never as a negative step.
            let written = snapshot.bytesReceived >= last.received ? snapshot.bytesReceived - last.received : snapshot.bytesReceived
            return (.downloadTaskDidWriteData, writeDataPayload(
                written: written, total: snapshot.bytesReceived, expected: snapshot.bytesExpectedToReceive
            ))
        }
        return nil
    }
}

/// What the heartbeat remembers between beats, per lease.
struct HeartbeatMemory {
    struct Reported {
        var received: Int64
        var checkpointedBytes: Int64
        var checkpointedAt: ContinuousClock.Instant
    }

    var reported: [LeaseToken: Reported] = [:]
}
