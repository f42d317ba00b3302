import FerryCore
import FerryStore
import Foundation
import Logging
import Postgres
import Synchronization

/// Records attempts answered 2xx together: while one statement is being written, the attempts
/// that finish meanwhile gather for the next (a group commit). One transaction per attempt was
/// what limited delivery to a few hundred events a second, and a task's next event cannot be
/// claimed before its previous one is recorded. Runs in the webhook service's task group; once
/// closed, callers record their own attempt.
final class DeliveredAttemptRecorder: Sendable {
    private struct Waiting {
        var attempt: DeliveredAttempt
        /// nil: submitted, nobody waits for it.
        var continuation: CheckedContinuation<Handling, any Error>?
    }

    private struct State {
        var waiting: [Waiting] = []
        /// The deliveries of the statement being written now.
        var writing: [String] = []
        var isClosed = false
    }

    /// Bounds a statement's size; the rest waits for the next one.
    static let maximumBatch = 500

    /// How long a small batch waits for more before it is written. This instance's claims and
    /// decisions do not wait for a record (answered deliveries count as finished here at once),
    /// and a statement per few attempts was the single largest use of PostgreSQL in decisions.sh
    /// (875 statements, 1.5 s, for 5,000 attempts).
    static let gathering = Duration.milliseconds(5)

    private let ledger: WebhookLedger
    private let state = Mutex(State())
    private let bell = WakeSignal()
    /// How long a batch is tried: as long as the deliveries' leases stand, a late record keeps
    /// their order (this instance has sent their tasks' next events already); once they end,
    /// the deliveries are sent again anyway.
    private let tryingFor: Duration

    private let logger: Logger

    init(ledger: WebhookLedger, tryingFor: Duration, logger: Logger) {
        self.ledger = ledger
        self.tryingFor = tryingFor
        self.logger = logger
    }

    /// What the recorder did with an attempt handed to it.
    private enum Handling: Sendable {
        /// Recorded; whether this instance still held the delivery's lease.
        case recorded(leaseHeld: Bool)
        /// Closed: the caller records it.
        case refused
    }

    /// Records the attempt; returns whether this instance still held the delivery's lease.
    func record(_ attempt: DeliveredAttempt) async throws -> Bool {
        let handling = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Handling, any Error>) in
            let isClosed = state.withLock { state in
                if !state.isClosed { state.waiting.append(Waiting(attempt: attempt, continuation: continuation)) }
                return state.isClosed
            }
            if isClosed { continuation.resume(returning: .refused) } else { bell.ring() }
        }
        switch handling {
        case .recorded(let leaseHeld):
            return leaseHeld
        case .refused:
            return try await ledger.recordDelivered([attempt]).contains(attempt.deliveryID)
        }
    }

    /// Hands the attempt over without waiting for it to be written: for a decision, whose
    /// transfer should go on as soon as the reply is in. Until it is written the delivery stays
    /// leased, so the task's later events wait behind it; if it is never written (a crash), the
    /// lease ends and the decision is sent again: at least once, as every delivery. Returns
    /// false when closed (the caller records it).
    func submit(_ attempt: DeliveredAttempt) -> Bool {
        let isClosed = state.withLock { state in
            if !state.isClosed { state.waiting.append(Waiting(attempt: attempt, continuation: nil)) }
            return state.isClosed
        }
        if !isClosed { bell.ring() }
        return !isClosed
    }

    /// Deliveries answered 2xx whose record is not written yet: their requests are over, though
    /// their leases still stand. This instance's claims treat them as finished (their streams'
    /// next events may go, and they take no in-flight slot), instead of waiting for the record,
    /// which waited for a group commit (a median 47 ms in webhooks.sh) with every slot it held.
    func answeredDeliveryIDs() -> [String] {
        state.withLock { $0.writing + $0.waiting.map(\.attempt.deliveryID) }
    }

    /// Writes what gathers until closed and nothing is left; tells `recorded` what was written.
    func run(recorded: @Sendable ([DeliveredAttempt]) -> Void) async {
        while true {
            let gathered = state.withLock { $0.waiting.count }
            if gathered > 0, gathered < Self.maximumBatch / 4 { try? await Task.sleep(for: Self.gathering) }
            let (batch, isClosed) = state.withLock { state in
                let count = min(state.waiting.count, Self.maximumBatch)
                defer { state.waiting.removeFirst(count) }
                state.writing = state.waiting.prefix(count).map(\.attempt.deliveryID)
                return (Array(state.waiting.prefix(count)), state.isClosed)
            }
            if batch.isEmpty {
                if isClosed { return }
                await bell.wait(timeout: .seconds(1))
                continue
            }
            defer { state.withLock { $0.writing = [] } }
            do {
                let attempts = batch.map(\.attempt)
                let held = try await recordTrying(attempts)
                recorded(attempts)
                for entry in batch { entry.continuation?.resume(returning: .recorded(leaseHeld: held.contains(entry.attempt.deliveryID))) }
            } catch {
                for entry in batch { entry.continuation?.resume(throwing: error) }
                if batch.contains(where: { $0.continuation == nil }) {
                    // Nobody waits for these: their leases end and they are sent again.
                    logger.error("recording delivered attempts failed; they will be sent again", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Writes the batch, trying again while the database is briefly away (a deadlock, a dropped
    /// connection, a failover) for as long as the leases stand, and not after a refusal of what
    /// the statement carries: this instance has moved on to these deliveries' next events
    /// already, and unwritten they would be sent again when their leases end, after those.
    /// Nor once the recorder's task is cancelled: its sleep would return at once, and the loop
    /// spin (and log every try) until the leases ended.
    private func recordTrying(_ attempts: [DeliveredAttempt]) async throws -> Set<String> {
        let deadline = ContinuousClock.now + tryingFor
        var pacing = OutageRetryPacing(initialPause: .milliseconds(50))
        while true {
            do {
                return try await ledger.recordDelivered(attempts)
            } catch let failure {
                let retry = pacing.failed(at: .now)
                guard !PostgresError.refusesAgain(failure), ContinuousClock.now + retry.pause < deadline else { throw failure }
                if let log = retry.log {
                    logger.warning("recording delivered attempts failed; trying again", metadata: [
                        "error": "\(failure)", "failedTries": "\(log.failedTries)", "failedInAll": "\(log.failedInAll)",
                    ])
                }
                do { try await Task.sleep(for: retry.pause) } catch { throw failure }
            }
        }
    }

    /// No more gathering: what waits is still written; later attempts are recorded by their callers.
    func close() {
        state.withLock { $0.isClosed = true }
        bell.ring()
    }
}
