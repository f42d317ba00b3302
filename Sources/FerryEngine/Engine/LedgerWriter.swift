import FerryCore
import FerryStore
import Foundation
import Logging
import Postgres
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
            for group in Self.coalescedGroups(writes) where !(await perform(group.merged)) {
                // Refused, so nothing of it was written. Its writes go one by one, and only one
                // refused by itself is set aside: a write the database will never take must not
                // hold up every later one (events, ends, lease renewals) for good.
                guard group.members.count > 1 else {
                    setAside(group.merged)
                    continue
                }
                for member in group.members where !(await perform(member)) {
                    setAside(member)
                }
            }
        }
    }

    /// Merges neighbours of the same kind, and events with transfers' ends, so that many small
    /// transfers ending together cost one commit; each task's writes keep their order.
    static func coalesce(_ writes: [Write]) -> [Write] {
        coalescedGroups(writes).map(\.merged)
    }

    /// `coalesce`, with the writes each merged one was made of.
    static func coalescedGroups(_ writes: [Write]) -> [(merged: Write, members: [Write])] {
        var groups: [(merged: Write, members: [Write])] = []
        for write in writes {
            if let last = groups.last, let merged = merge(last.merged, write) {
                groups[groups.count - 1].merged = merged
                groups[groups.count - 1].members.append(write)
            } else {
                groups.append((write, [write]))
            }
        }
        return groups
    }

    /// `later` in the transaction of `earlier`, or nil when they do not share one.
    private static func merge(_ earlier: Write, _ later: Write) -> Write? {
        switch (earlier, later) {
        case (.events(let earlier, let earlierAsking), .events(let later, let laterAsking)):
            .events(earlier + later, asking: earlierAsking + laterAsking)
        case (.events(let events, let asking), .finish(let outcomes, let after, let laterAsking)):
            .finish(outcomes, after: events + after, asking: asking + laterAsking)
        // Later events may move before earlier ends: they cannot belong to a transfer that
        // ends earlier (its lease is gone with its end, and it is claimed again only after
        // that end is written), so every task's own events keep their order.
        case (.finish(let outcomes, let earlier, let earlierAsking), .events(let later, let asking)):
            .finish(outcomes, after: earlier + later, asking: earlierAsking + asking)
        case (.finish(let earlier, let earlierEvents, let earlierAsking), .finish(let later, let laterEvents, let laterAsking)):
            .finish(earlier + later, after: earlierEvents + laterEvents, asking: earlierAsking + laterAsking)
        case (.cookies(let earlier), .cookies(let later)):
            .cookies(earlier + later)
        default:
            nil
        }
    }

    /// Hands each waiting decision its claim.
    private func tell(_ asking: [AskingDecision], _ claims: [String: DecisionClaim]) {
        for waiting in asking { waiting.claimed(claims[waiting.decision.eventID]) }
    }

    /// Performs one write, retrying while the database is unreachable, busy or full: dropping it
    /// would lose an event, and skipping ahead would reorder them. Heartbeats are not retried
    /// (the next one supersedes them). A write that fails while claiming decisions is tried again
    /// without the claims: those decisions take the default (the queue sends their events after
    /// the grace period), and the write is not held up by them. Returns false when the database
    /// refuses the write for what it carries (`PostgresError.refusesAgain`), `triesOfARefusedWrite` times.
    private func perform(_ write: Write) async -> Bool {
        var delay = Duration.milliseconds(100)
        var claiming = true
        var refusals = 0
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
                return true
            } catch {
                if claiming, write.asksForDecisions {
                    logger.error("writing decision events with their claims failed; writing them without", metadata: ["error": "\(error)"])
                    claiming = false
                    continue
                }
                if PostgresError.refusesAgain(error) {
                    refusals += 1
                    if refusals >= Self.triesOfARefusedWrite { return false }
                }
                logger.warning("writing transfer state failed; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }
}

extension LedgerWriter {
    /// How often a write the database refuses for what it carries is tried.
    static let triesOfARefusedWrite = 3

    /// Gives up a write the database refuses, loudly: its events and its ends are lost (the
    /// transfers' leases lapse, and the reaper ends or releases their tasks), but everything
    /// after it is written.
    fileprivate func setAside(_ write: Write) {
        logger.error("the database refuses a write of transfer state; it is set aside", metadata: [
            "tasks": "\(write.taskIDs.sorted().joined(separator: ","))", "events": "\(write.eventCount)",
        ])
        switch write {
        case .events(_, let asking), .finish(_, _, let asking): asking.forEach { $0.claimed(nil) }
        case .heartbeat(_, let reply): reply(nil)
        case .cookies: break
        }
    }
}

extension LedgerWriter.Write {
    /// The tasks the write is about (for the log).
    var taskIDs: Set<String> {
        switch self {
        case .events(let events, _): Set(events.map(\.lease.taskID))
        case .finish(let outcomes, let events, _): Set(outcomes.map(\.lease.taskID) + events.map(\.lease.taskID))
        case .heartbeat(let progress, _): Set(progress.map(\.lease.taskID))
        case .cookies: []
        }
    }

    var eventCount: Int {
        switch self {
        case .events(let events, _), .finish(_, let events, _): events.count
        case .heartbeat, .cookies: 0
        }
    }

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
