import FerryCore
import FerryStore

/// The engine's bookkeeping of what this instance holds: transfers on workers, and claimed
/// tasks waiting for a connection slot (`httpMaximumConnectionsPerHost`). Guarded by a Mutex
/// in `TransferEngine`; every method is quick.
///
/// A task is held under one lease at a time. An instance whose heartbeats ran late can claim a
/// task again (after another instance took the lapsed lease over and handed it back) while its
/// old transfer still runs here: the new claim is refused until the old one is gone (`admit`),
/// and whatever ends or stops a lease touches only that lease's entry. Keyed by task alone, the
/// old transfer's end removed the new one's entry (which then could not be stopped, and its
/// host's slot count never came down), or the other way round.
struct EngineBook {
    private struct Running {
        var worker: Int
        var host: HostKey
        var lease: LeaseToken
        /// As `TransferJob.heldSince`.
        var heldSince: ContinuousClock.Instant
    }

    private var running: [String: Running] = [:]
    private var perWorker: [Int]
    private var perHost: [HostKey: Int] = [:]
    private var waiting: [HostKey: [TransferJob]] = [:]
    private(set) var waitingCount = 0
    var isStopping = false

    init(workerCount: Int) {
        perWorker = Array(repeating: 0, count: workerCount)
    }

    var heldCount: Int { running.count + waitingCount }

    enum Admission: Equatable {
        case start(worker: Int)
        case wait
        /// The instance is stopping: the job is handed back unstarted.
        case refused
        /// The task is still held here under this older lease, which was taken over meanwhile:
        /// the job goes back for a moment, and the old transfer must stop.
        case heldUnder(LeaseToken)
    }

    /// Starts the job on the least busy worker if its host has a free slot; otherwise it waits
    /// (still leased, so no other instance takes it) without its request timeout running.
    mutating func admit(_ job: TransferJob, host: HostKey, limit: Int) -> Admission {
        guard !isStopping else { return .refused }
        if let held = lease(holding: job.taskID), held != job.lease { return .heldUnder(held) }
        guard perHost[host, default: 0] < limit else {
            waiting[host, default: []].append(job)
            waitingCount += 1
            return .wait
        }
        return .start(worker: place(job, host: host))
    }

    /// A transfer ended: frees its slot, and returns a waiting job that may start now. Nothing
    /// for a lease the book does not run (a job that never started).
    mutating func release(_ lease: LeaseToken) -> (job: TransferJob, worker: Int)? {
        guard let entry = running[lease.taskID], entry.lease == lease else { return nil }
        running.removeValue(forKey: lease.taskID)
        perWorker[entry.worker] -= 1
        perHost[entry.host, default: 1] -= 1
        if perHost[entry.host] == 0 { perHost.removeValue(forKey: entry.host) }
        guard !isStopping, var queue = waiting[entry.host], let first = Self.nextToStart(in: queue) else { return nil }
        let next = queue.remove(at: first)
        waiting[entry.host] = queue.isEmpty ? nil : queue
        waitingCount -= 1
        return (next, place(next, host: entry.host))
    }

    /// Which of the jobs waiting for one host starts first: the highest priority, then the
    /// oldest, as the claim orders a session's queued tasks.
    private static func nextToStart(in queue: [TransferJob]) -> Int? {
        queue.indices.min { a, b in
            let (first, second) = (queue[a].claim, queue[b].claim)
            return first.priority != second.priority ? first.priority > second.priority : first.taskIdentifier < second.taskIdentifier
        }
    }

    /// A waiting job's priority changed (`PATCH`): it takes its new place among those waiting
    /// for its host. Returns false when the task is not waiting here (it runs, or left).
    mutating func reprioritizeWaiting(taskID: String, priority: Double) -> Bool {
        for (host, queue) in waiting {
            guard let index = queue.firstIndex(where: { $0.taskID == taskID }) else { continue }
            waiting[host]?[index].claim.priority = priority
            return true
        }
        return false
    }

    /// Removes a job that was waiting for a slot (it is being stopped before it started); with
    /// `lease`, only that lease's.
    mutating func removeWaiting(taskID: String, lease: LeaseToken? = nil) -> TransferJob? {
        for (host, queue) in waiting {
            guard let index = queue.firstIndex(where: { $0.taskID == taskID && (lease == nil || $0.lease == lease) }) else { continue }
            var remaining = queue
            let job = remaining.remove(at: index)
            waiting[host] = remaining.isEmpty ? nil : remaining
            waitingCount -= 1
            return job
        }
        return nil
    }

    mutating func removeAllWaiting() -> [TransferJob] {
        let jobs = waiting.values.flatMap { $0 }
        waiting.removeAll()
        waitingCount = 0
        return jobs
    }

    var waitingJobs: [TransferJob] { waiting.values.flatMap { $0 } }

    /// A session's `flush` or `reset` reaches its jobs waiting for a slot.
    mutating func renewWaiting(_ renewal: SessionRenewal) {
        for host in waiting.keys where host.sessionID == renewal.sessionID {
            waiting[host] = waiting[host]?.map { job in
                var job = job
                _ = job.apply(renewal)
                return job
            }
        }
    }

    /// The worker running the task; with `lease`, only under that lease.
    func worker(of taskID: String, lease: LeaseToken? = nil) -> Int? {
        guard let entry = running[taskID], lease == nil || entry.lease == lease else { return nil }
        return entry.worker
    }

    /// Whether this lease's transfer is still here (running or waiting): a heartbeat may report
    /// a lease lost after the transfer ended and its end was written.
    func holds(_ lease: LeaseToken) -> Bool {
        running[lease.taskID]?.lease == lease || waiting.values.contains { $0.contains { $0.lease == lease } }
    }

    /// The lease the task is held under here, running or waiting, if it is.
    func lease(holding taskID: String) -> LeaseToken? {
        running[taskID]?.lease ?? waiting.values.lazy.compactMap { $0.first { $0.taskID == taskID }?.lease }.first
    }

    /// A heartbeat sent at `instant` renewed these leases (those held here).
    mutating func renewed(_ leases: Set<LeaseToken>, at instant: ContinuousClock.Instant) {
        for (taskID, entry) in running where leases.contains(entry.lease) {
            running[taskID]?.heldSince = max(entry.heldSince, instant)
        }
        for (host, queue) in waiting {
            waiting[host] = queue.map { job in
                var job = job
                if leases.contains(job.lease) { job.heldSince = max(job.heldSince, instant) }
                return job
            }
        }
    }

    /// The leases held here (running or waiting) not known to hold beyond `instant`: taken, and
    /// last renewed, before it.
    func leases(lastHeldBefore instant: ContinuousClock.Instant) -> [LeaseToken] {
        running.values.filter { $0.heldSince < instant }.map(\.lease)
            + waiting.values.flatMap { $0.filter { $0.heldSince < instant }.map(\.lease) }
    }

    /// The tasks held here, running or waiting.
    var taskIDs: [String] {
        Array(running.keys) + waiting.values.flatMap { $0.map(\.taskID) }
    }

    private mutating func place(_ job: TransferJob, host: HostKey) -> Int {
        let worker = perWorker.indices.min { perWorker[$0] < perWorker[$1] } ?? 0
        perWorker[worker] += 1
        perHost[host, default: 0] += 1
        running[job.taskID] = Running(worker: worker, host: host, lease: job.lease, heldSince: job.heldSince)
        return worker
    }
}
