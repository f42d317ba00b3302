/// A unit of work waiting for a pool connection.
struct PostgresPoolJob: Sendable {
    /// Give up (re)connecting for this job after this instant.
    let deadline: ContinuousClock.Instant
    /// When it was asked for: a job asked for before the process began stopping had a deadline
    /// for a running process, which the stopping one shortens (`givingUpPoint`).
    let submittedAt: ContinuousClock.Instant
    /// Runs on a worker thread with a healthy connection.
    let run: @Sendable (PostgresConnection) -> Void
    /// Called instead of `run` when no connection could be had, or the pool was closed.
    let fail: @Sendable (PostgresError) -> Void
}

/// The pool's shared state: the FIFO of waiting jobs and the worker threads. Guarded by the pool's
/// condition lock; plain value, no I/O.
///
/// Workers are started lazily: a job that finds no sleeping worker to take it starts a new one,
/// up to the pool's size. Legal transitions: open → closed (never back); once closed, no job is
/// accepted, queued jobs still run, and each worker exits when it finds the queue empty.
struct PostgresPoolQueue {
    enum Admission: Equatable {
        /// The job was queued; a sleeping worker will take it.
        case queued
        /// The job was queued and no worker is free: start worker number `n`.
        case startWorker(number: Int)
        /// The pool is closed.
        case rejected
    }

    enum NextStep {
        case run(PostgresPoolJob)
        case exit
    }

    let size: Int
    private var jobs: [PostgresPoolJob?] = []
    private var head = 0
    private(set) var sleepingWorkers = 0
    private(set) var workerCount = 0
    private(set) var isClosed = false
    var threads: [DedicatedThread] = []

    init(size: Int) {
        self.size = max(1, size)
    }

    var queuedCount: Int { jobs.count - head }

    mutating func submit(_ job: PostgresPoolJob) -> Admission {
        guard !isClosed else { return .rejected }
        jobs.append(job)
        if queuedCount > sleepingWorkers, workerCount < size {
            workerCount += 1
            return .startWorker(number: workerCount)
        }
        return .queued
    }

    /// A worker could not be started after all.
    mutating func workerFailedToStart() -> [PostgresPoolJob] {
        workerCount -= 1
        return workerCount == 0 ? drainAll() : []
    }

    /// What a worker does next; nil means "sleep, then ask again". `wasSleeping` tells the queue
    /// that this worker is waking from a sleep it announced by getting nil.
    mutating func nextStep(wasSleeping: Bool) -> NextStep? {
        if wasSleeping { sleepingWorkers -= 1 }
        if head < jobs.count, let job = jobs[head] {
            jobs[head] = nil
            head += 1
            compact()
            return .run(job)
        }
        if isClosed { return .exit }
        sleepingWorkers += 1
        return nil
    }

    mutating func close() -> [DedicatedThread] {
        isClosed = true
        defer { threads = [] }
        return threads
    }

    private mutating func drainAll() -> [PostgresPoolJob] {
        let drained = jobs[head...].compactMap { $0 }
        jobs = []
        head = 0
        return drained
    }

    /// Drops consumed slots once they are the larger part of the array, keeping pops O(1) amortized.
    private mutating func compact() {
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
    }
}
