import FerryCore
import FerryStore
import Foundation
import Logging
import Synchronization

/// Everything an owner writes about its transfers goes through this one queue, in order, so a
/// task's events keep the order in which they happened (a response before its progress, its
/// progress before its completion). Consecutive writes of the same kind share a transaction.
final class LedgerWriter: Sendable {
    enum Write: Sendable {
        /// `asking`: decision events among them whose deliveries the same transaction claims;
        /// each is told its claim once the events are in the log (the receiver is asked after).
        case events([OwnerEvent], asking: [AskingDecision] = [])
        /// Transfers' ends, after their last events (both in one transaction); `asking` as for `events`.
        case finish([(lease: LeaseToken, outcome: TransferOutcome)], after: [OwnerEvent] = [], asking: [AskingDecision] = [])
        case heartbeat([TransferProgress], reply: @Sendable (HeartbeatResult?) -> Void)
        case cookies([CookieUpdate])
    }

    /// A decision event that waits for its delivery's claim (nil: nobody hears it, or nothing
    /// was written).
    struct AskingDecision: Sendable {
        var decision: AskedDecision
        var claimed: @Sendable (DecisionClaim?) -> Void
    }

    private let ledger: TransferLedger
    /// How decision deliveries are claimed, asked for each transaction; nil without a gateway.
    private let claimTerms: (@Sendable () -> DecisionClaimTerms)?
    private let cookies: CookieStore
    /// `isPerforming`: writes taken from the queue are being written (see `isIdle`).
    private let queue = Mutex<(writes: [Write], isStopped: Bool, isPerforming: Bool)>(([], false, false))
    private let doorbell: AsyncStream<Void>.Continuation
    private let rings: AsyncStream<Void>
    private let logger: Logger
    private let workers: Int
    private let version: String
    /// Called after transfers' ends are committed: their slots (per host, per tenant) count as
    /// free in the database only from then on, so this is when claiming again can find work.
    private let finished: @Sendable () -> Void
    /// For a task cancelled by producing resume data while it was being handed back.
    private let resumeData: ResumeDataIssuer

    init(
        ledger: TransferLedger, cookies: CookieStore, workers: Int, version: String, logger: Logger,
        resumeData: ResumeDataIssuer, claimTerms: (@Sendable () -> DecisionClaimTerms)? = nil,
        finished: @escaping @Sendable () -> Void
    ) {
        self.claimTerms = claimTerms
        self.finished = finished
        self.resumeData = resumeData
        self.ledger = ledger
        self.cookies = cookies
        self.workers = workers
        self.version = version
        self.logger = logger
        (rings, doorbell) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func enqueue(_ write: Write) {
        let accepted = queue.withLock { queue in
            guard !queue.isStopped else { return false }
            queue.writes.append(write)
            return true
        }
        guard accepted else {
            // After the final drain nothing is written; whoever waits for an answer gets none.
            if case .heartbeat(_, let reply) = write { reply(nil) }
            if case .events(_, let asking) = write { asking.forEach { $0.claimed(nil) } }
            if case .finish(_, _, let asking) = write { asking.forEach { $0.claimed(nil) } }
            return
        }
        doorbell.yield()
    }

    /// Queues a decision event whose delivery the write claims: the event takes its place in the
    /// queue now, and the caller awaits the claim when it likes (`PendingClaim.value`).
    func enqueueClaiming(_ event: OwnerEvent) -> PendingClaim {
        let (claims, claimed) = AsyncStream<DecisionClaim?>.makeStream()
        guard let eventID = event.id else {
            enqueue(.events([event]))
            claimed.finish()
            return PendingClaim(claims: claims)
        }
        let asked = AskedDecision(eventID: eventID, taskID: event.lease.taskID)
        enqueue(.events([event], asking: [AskingDecision(decision: asked) { claimed.yield($0); claimed.finish() }]))
        return PendingClaim(claims: claims)
    }

    /// Nothing queued and nothing being written: a shutdown waiting for the last outcomes goes
    /// on (and stops renewing leases) only once their transaction has committed.
    var isIdle: Bool { queue.withLock { $0.writes.isEmpty && !$0.isPerforming } }

    /// Writes until `stop()`, then drains what is queued.
    func run() async {
        for await _ in rings {
            await drain()
        }
        await drain()
        queue.withLock { $0.isStopped = true }
        await drain()
    }

    /// Ends `run()` once what is queued is written; later writes are refused.
    func stop() {
        doorbell.finish()
    }

    private func drain() async {
        while true {
            let writes = queue.withLock { queue in
                defer { queue.writes.removeAll() }
                queue.isPerforming = !queue.writes.isEmpty
                return queue.writes
            }
            guard !writes.isEmpty else { return }
            for batch in Self.coalesce(writes) {
                await perform(batch)
            }
        }
    }

    /// Merges neighbours of the same kind, and events with transfers' ends, so that many small
    /// transfers ending together cost one commit; each task's writes keep their order.
    static func coalesce(_ writes: [Write]) -> [Write] {
        var merged: [Write] = []
        for write in writes {
            switch (merged.last, write) {
            case (.events(let earlier, let earlierAsking)?, .events(let later, let laterAsking)):
                merged[merged.count - 1] = .events(earlier + later, asking: earlierAsking + laterAsking)
            case (.events(let events, let asking)?, .finish(let outcomes, let after, let laterAsking)):
                merged[merged.count - 1] = .finish(outcomes, after: events + after, asking: asking + laterAsking)
            // Later events may move before earlier ends: they cannot belong to a transfer that
            // ends earlier (its lease is gone with its end, and it is claimed again only after
            // that end is written), so every task's own events keep their order.
            case (.finish(let outcomes, let earlier, let earlierAsking)?, .events(let later, let asking)):
                merged[merged.count - 1] = .finish(outcomes, after: earlier + later, asking: earlierAsking + asking)
            case (.finish(let earlier, let earlierEvents, let earlierAsking)?, .finish(let later, let laterEvents, let laterAsking)):
                merged[merged.count - 1] = .finish(earlier + later, after: earlierEvents + laterEvents, asking: earlierAsking + laterAsking)
            case (.cookies(let earlier)?, .cookies(let later)):
                merged[merged.count - 1] = .cookies(earlier + later)
            default:
                merged.append(write)
            }
        }
        return merged
    }

    /// Hands each waiting decision its claim.
    private func tell(_ asking: [AskingDecision], _ claims: [String: DecisionClaim]) {
        for waiting in asking { waiting.claimed(claims[waiting.decision.eventID]) }
    }

    /// Performs one write, retrying while the database is unreachable: dropping it would lose
    /// an event, and skipping ahead would reorder them. Heartbeats are not retried (the next
    /// one supersedes them). A write that fails while claiming decisions is tried again
    /// without the claims: those decisions take the default (the queue sends their events
    /// after the grace period), and the write is not held up by them.
    private func perform(_ write: Write) async {
        var delay = Duration.milliseconds(100)
        var claiming = true
        while true {
            // Taken for each try: the recorder's answered deliveries change meanwhile.
            let terms = claiming && write.asksForDecisions ? claimTerms?() : nil
            do {
                switch write {
                case .events(let events, let asking):
                    tell(asking, try await ledger.record(events, asking: asking.map(\.decision), terms: terms))
                case .finish(let outcomes, let events, let asking):
                    let (_, claimed) = try await ledger.finish(
                        outcomes, after: events, asking: asking.map(\.decision), terms: terms, resumeData: resumeData
                    )
                    finished()
                    tell(asking, claimed)
                case .cookies(let updates):
                    try await cookies.apply(updates)
                case .heartbeat(let progress, let reply):
                    do {
                        reply(try await ledger.heartbeat(progress, workers: workers, version: version))
                    } catch {
                        logger.warning("heartbeat failed", metadata: ["error": "\(error)"])
                        reply(nil)
                    }
                }
                return
            } catch {
                if claiming, write.asksForDecisions {
                    logger.error("writing decision events with their claims failed; writing them without", metadata: ["error": "\(error)"])
                    claiming = false
                    continue
                }
                logger.warning("writing transfer state failed; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }
}

extension LedgerWriter.Write {
    /// Whether the write claims decision deliveries.
    var asksForDecisions: Bool {
        switch self {
        case .events(_, let asking), .finish(_, _, let asking): !asking.isEmpty
        case .heartbeat, .cookies: false
        }
    }
}

/// A decision event's claim, answered once the event is written.
struct PendingClaim: Sendable {
    fileprivate let claims: AsyncStream<DecisionClaim?>

    /// Nil: nobody hears the event, or it was written without its claim.
    func value() async -> DecisionClaim? {
        for await claim in claims { return claim }
        return nil
    }
}
