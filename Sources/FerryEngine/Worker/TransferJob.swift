import FerryCore
import FerryStore
import Foundation

/// A claimed task as a worker runs it: the claim plus where its files are and the rules it obeys.
struct TransferJob: Sendable {
    var claim: ClaimedTask
    /// Downloads: the partial file's name and path.
    var partialName: String?
    var partialPath: String?
    /// Downloads: where an owner that died before recording the completion may have left the
    /// finished file, to take it back: this task's downloads file, then, after resume data was
    /// adopted, that of the task that wrote the partial file.
    var finishedPaths: [String] = []
    /// Downloads: the partial file, opened by the engine before the job reaches a worker.
    var partialFile: OpenedPartialFile?
    /// Uploads from a blob: its path.
    var uploadFilePath: String?
    /// Streamed uploads: the tenant's folder of body streams.
    var streamDirectory: String?
    /// The decision events the task's delegate subscribes to: those pause the transfer.
    var decisions: Set<EventType> = []
    /// The delegate opted in to `dataTask.didReceiveData`: the body goes out in events too.
    var receivesData = false
    /// The URL cache's part, for tasks that use it.
    var cache: CacheContext?
    var addressPolicy: AddressPolicy
    /// The most a data or upload task keeps of a response body.
    var maximumDataBytes: Int
    var userAgent: String
    /// Where downloads stop writing (the free-space reserve); nil: no reserve.
    var diskSpace: DiskSpace? = nil
    /// The process's memory for data tasks' bodies.
    var memory: MemoryBudget? = nil
    /// Since when its lease surely holds for `leaseDuration` (`TransferEngine.runLeaseWatch`):
    /// just before the claim that took it was sent, then before each heartbeat that renewed it
    /// was (`EngineBook.renewed`).
    var heldSince = ContinuousClock.now

    var lease: LeaseToken { LeaseToken(taskID: claim.taskID, epoch: claim.leaseEpoch) }
    var taskID: String { claim.taskID }
    var attempt: Int { claim.previousAttempts + 1 }

    /// `timeoutInterval` of the request, else the session's `timeoutIntervalForRequest`.
    var requestTimeout: Double {
        claim.originalRequest.timeoutInterval ?? claim.configuration.timeoutIntervalForRequest
    }
}

/// What the URL cache decided for a task before its transfer.
struct CacheContext: Sendable {
    var key: String
    /// The stored entry a conditional request revalidates (a 304 answers from it).
    var entry: CachedResponse?
    var conditionalHeaders: [CachedHeaderField]?
}

/// Per-host admission: the key under which `httpMaximumConnectionsPerHost` is counted.
struct HostKey: Hashable, Sendable {
    var sessionID: String
    var host: String
}
