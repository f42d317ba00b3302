import Logging
import Synchronization

/// A fixed number of connections, each owned by its own dedicated thread ("ferry-pg-N"), never by
/// Swift's cooperative pool or Dispatch's global queues, because libpq blocks.
///
/// Async callers hand a synchronous closure to a free connection's thread and await the result;
/// when every connection is busy they queue FIFO. Connections are opened lazily; one found broken
/// (server restart, terminated backend) is discarded and a new one opened for the next caller,
/// retrying for up to `connectTimeout` before that caller gets the error.
///
/// Cancelling the awaiting task does not abandon the work: once asked for, it runs to completion
/// (a connection is never left mid-transaction, and a shutdown path can still write its checkpoint).
public final class PostgresPool: Sendable {
    let shared: Shared

    public init(configuration: PostgresPoolConfiguration, logger: Logger) {
        shared = Shared(configuration: configuration, logger: logger)
    }

    /// Runs `body` with a connection on the connection's own thread and returns its result;
    /// its commits are as `durability` says, its statements planned as `plans` says (both left
    /// as they are for `.readOnly`).
    @discardableResult
    public func withConnection<T: Sendable>(
        commit durability: CommitDurability = .durable, plans: StatementPlans = .chosenByServer,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        let contact = ServerContact.current
        let deadline = shared.connectDeadline(for: contact)
        return try await withCheckedThrowingContinuation { continuation in
            shared.submit(
                deadline: deadline,
                run: { connection in
                    contact?.markReached()
                    continuation.resume(with: Result {
                        try connection.prepareSession(commit: durability, plans: plans)
                        return try body(connection)
                    })
                },
                fail: { error in continuation.resume(throwing: error) }
            )
        }
    }

    /// Runs `body` inside BEGIN … COMMIT; ROLLBACK when it throws. A connection lost mid-transaction
    /// throws (kind `.connection`) and is never retried here: `body` may not be idempotent.
    /// `setUp`: as in `PostgresConnection.withTransaction(setUp:_:)`.
    ///
    /// The commit's kind is asked for with `SET LOCAL`, sent with BEGIN, when the session's own
    /// setting is not it already: the session's setting is not changed, so calls of either kind
    /// that follow need no SET of their own. (A durable transaction on a connection an
    /// asynchronous call left asynchronous sent a RESET first, and the next asynchronous call a
    /// SET again: in bench/decisions.sh's delegate run, 1,300 round trips per 1,000 tasks.)
    @discardableResult
    public func withTransaction<T: Sendable>(
        setUp: String? = nil, commit durability: CommitDurability = .durable, plans: StatementPlans = .chosenByServer,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        // The session's settings are left alone (`.readOnly`): the transaction asks for its own.
        try await withConnection(commit: .readOnly) { connection in
            let statements = [connection.localSettings(for: durability, plans: plans), setUp].compactMap { $0 }
            return try connection.withTransaction(setUp: statements.isEmpty ? nil : statements.joined(separator: "; "), body)
        }
    }

    /// `withConnection` for callers on a dedicated thread of their own: blocks the calling thread.
    /// The pool's thread lends its connection and waits until `body` returns, so the connection is
    /// still used by one thread at a time. Not for use inside another pool call's `body`.
    @discardableResult
    public func withConnectionBlocking<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if shared.isOnWorkerThread {
            throw PostgresError(kind: .query, message: "withConnectionBlocking was called inside a pool call's body; use the connection already in hand")
        }
        let loan = ConnectionLoan()
        let contact = ServerContact.current
        shared.submit(
            deadline: shared.connectDeadline(for: contact),
            run: { connection in contact?.markReached(); loan.lend(connection) }, fail: { error in loan.refuse(error) }
        )
        let connection = try loan.waitForConnection()
        defer { loan.giveBack() }
        try connection.prepareSession(commit: .durable, plans: .chosenByServer)
        return try body(connection)
    }

    /// From now on the process is stopping, and a call no longer rides out an absent server: it
    /// gets one attempt while the server is known to be away, else it waits at most `patience`
    /// (so a restart of a second or two is still waited out), whether or not it already reached
    /// the server. A call already waiting waits at most `patience` from now. A shutdown that
    /// waited `connectTimeout` for each of its last writes took half a minute while the server
    /// was away (each part of it, in turn, waited). What it cannot write, a kill would have left
    /// unwritten too, and the next start, or another instance, recovers from that.
    public func beginStopping(patience: Duration = .seconds(2)) {
        shared.stopping.withLock { $0 = $0 ?? (patience, .now) }
    }

    /// Lets queued and running work finish, closes the connections and joins the threads. Later
    /// calls throw `.poolClosed`.
    public func close() async {
        let threads = shared.close()
        guard !threads.isEmpty else { return }
        _ = try? await DedicatedThread.run(name: "ferry-pg-close") {
            for thread in threads { thread.join() }
        }
    }
}

extension PostgresPool {
    /// What the pool's threads share with it. The threads hold this, not the pool.
    final class Shared: Sendable {
        let configuration: PostgresPoolConfiguration
        let logger: Logger
        let queue: ConditionLock<PostgresPoolQueue>
        /// When a worker last gave up connecting, until one connects again.
        let gaveUpConnecting = Mutex<ContinuousClock.Instant?>(nil)
        /// Set once the process is stopping (`beginStopping`): how long a call may still wait,
        /// and since when.
        let stopping = Mutex<(patience: Duration, since: ContinuousClock.Instant)?>(nil)

        init(configuration: PostgresPoolConfiguration, logger: Logger) {
            self.configuration = configuration
            self.logger = logger
            queue = ConditionLock(PostgresPoolQueue(size: configuration.size))
        }

        /// How long a call may wait for a connection: `connectTimeout`, riding out a server's
        /// restart; but a unit of work that tracks its contact (an API request, whose client
        /// waits) and has not reached the server yet gets one attempt only while the server is
        /// known to be away (a worker gave up connecting within the last `connectTimeout`, and
        /// none has had a live connection since), so that it is answered without retrying.
        /// Once a request reached the server, a failure could no longer be a clean 503: it
        /// waits like any call. Once the process is stopping, every call is treated so, and waits
        /// at most the stopping patience (`beginStopping`).
        func connectDeadline(for contact: ServerContact?) -> ContinuousClock.Instant {
            let now = ContinuousClock.now
            let isKnownAway = gaveUpConnecting.withLock { $0 }.map { now - $0 < configuration.connectTimeout } ?? false
            if let patience = stopping.withLock({ $0?.patience }) {
                return isKnownAway ? now : now + min(patience, configuration.connectTimeout)
            }
            if let contact, !contact.hasReachedServer, isKnownAway {
                return now
            }
            return now + configuration.connectTimeout
        }

        func submit(
            deadline: ContinuousClock.Instant, run: @escaping @Sendable (PostgresConnection) -> Void,
            fail: @escaping @Sendable (PostgresError) -> Void
        ) {
            let job = PostgresPoolJob(deadline: deadline, submittedAt: .now, run: run, fail: fail)
            var orphans: [PostgresPoolJob] = []
            let admission = queue.withLockSignalling { queue -> PostgresPoolQueue.Admission in
                let admission = queue.submit(job)
                if case .startWorker(let number) = admission {
                    // Started under the lock so that close() sees every thread it has to join.
                    do {
                        queue.threads.append(try DedicatedThread.start(name: "ferry-pg-\(number)") { [self] in
                            runWorker()
                        })
                    } catch {
                        logger.error("could not start a PostgreSQL pool thread", metadata: ["error": "\(error)"])
                        orphans = queue.workerFailedToStart()
                    }
                }
                return admission
            }
            if admission == .rejected {
                job.fail(.poolClosed)
            }
            for orphan in orphans {
                orphan.fail(PostgresError(kind: .connection, message: "no PostgreSQL pool thread could be started"))
            }
        }

        var isOnWorkerThread: Bool {
            queue.withLock { queue in queue.threads.contains { $0.isCurrent } }
        }

        func close() -> [DedicatedThread] {
            queue.withLockBroadcasting { queue in queue.close() }
        }
    }
}
