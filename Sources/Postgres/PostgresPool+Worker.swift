import Logging
import Synchronization

extension PostgresPool.Shared {
    /// The loop of one pool thread: take a job, make sure the connection is healthy (reopening it
    /// if needed), run the job, clean up after it. Exits when the pool is closed and drained.
    func runWorker() {
        var connection: PostgresConnection?
        defer { connection?.close() }
        var wasSleeping = false
        while true {
            let step = queue.wait { queue -> PostgresPoolQueue.NextStep? in
                let step = queue.nextStep(wasSleeping: wasSleeping)
                wasSleeping = step == nil
                return step
            }
            guard case .run(let job) = step else { return }
            switch healthyConnection(&connection, for: job) {
            case .success(let ready):
                job.run(ready)
                tidyAfterJob(&connection)
            case .failure(let error):
                job.fail(error)
            }
        }
    }

    /// The worker's connection if it is still alive, else a new one, retrying with backoff until
    /// the job's deadline while the server is unreachable (`givingUpPoint`).
    private func healthyConnection(_ connection: inout PostgresConnection?, for job: PostgresPoolJob) -> Result<PostgresConnection, PostgresError> {
        if let existing = connection {
            if existing.checkIdleHealth() {
                markReachable()
                return .success(existing)
            }
            logger.notice("discarding a PostgreSQL connection the server closed; opening a new one")
            existing.close()
            connection = nil
        }
        var backoff = ReconnectBackoff()
        var failures = 0
        while true {
            do {
                let opened = try PostgresConnection.connect(configuration.conninfo, applicationName: configuration.applicationName)
                if failures > 0 {
                    logger.notice("reconnected to PostgreSQL", metadata: ["failedAttempts": "\(failures)"])
                }
                connection = opened
                markReachable()
                return .success(opened)
            } catch {
                let failure = error as? PostgresError ?? PostgresError(kind: .connection, message: "\(error)")
                failures += 1
                let delay = backoff.nextDelay()
                if ContinuousClock.now + delay >= givingUpPoint(of: job) {
                    // Once per outage at error level: while it lasts, every call gives up, and
                    // those that get one attempt (`connectDeadline`) could flood the log.
                    let isFirst = gaveUpConnecting.withLock { gaveUp in
                        defer { gaveUp = .now }
                        return gaveUp == nil
                    }
                    logger.log(
                        level: isFirst ? .error : .debug, "cannot connect to PostgreSQL; giving up on this call",
                        metadata: ["error": "\(failure)"]
                    )
                    return .failure(failure)
                }
                if failures == 1, gaveUpConnecting.withLock({ $0 == nil }) {
                    logger.warning("cannot connect to PostgreSQL; retrying", metadata: ["error": "\(failure)"])
                }
                ReconnectBackoff.sleep(delay)
            }
        }
    }

    /// When a job stops waiting for the server: its deadline, or, for a job asked for before the
    /// process began stopping, at most the stopping patience after that (see `beginStopping`).
    /// Read at each failed attempt: the process may begin stopping while the job waits.
    private func givingUpPoint(of job: PostgresPoolJob) -> ContinuousClock.Instant {
        guard let stopping = stopping.withLock({ $0 }), job.submittedAt < stopping.since else { return job.deadline }
        return min(job.deadline, stopping.since + stopping.patience)
    }

    /// A job that lost the connection leaves it broken: drop it. A job that left a transaction open
    /// (or aborted) would poison the next caller: roll it back.
    private func tidyAfterJob(_ connection: inout PostgresConnection?) {
        guard let current = connection else { return }
        if current.isBroken {
            current.close()
            connection = nil
            return
        }
        if current.isInTransaction {
            logger.warning("a pool call left a transaction open; rolling it back")
            do {
                try current.execute("ROLLBACK")
            } catch {
                current.close()
                connection = nil
            }
        }
    }

    /// A worker has a live connection: the server is not away (whatever another worker met,
    /// such as max_connections for a moment), so requests get their whole deadline again.
    private func markReachable() {
        let wasAway = gaveUpConnecting.withLock { gaveUp in
            defer { gaveUp = nil }
            return gaveUp != nil
        }
        if wasAway { logger.notice("PostgreSQL is reachable again") }
    }
}
