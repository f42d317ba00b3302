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
        /// `reply`: the result (nil: not written), and when its transaction was about to be
        /// sent, from which each lease it renewed holds a lease's length at least.
        case heartbeat([TransferProgress], reply: @Sendable (HeartbeatResult?, _ sentAt: ContinuousClock.Instant) -> Void)
        case cookies([CookieUpdate])
    }

    /// A decision event that waits for its delivery's claim (nil: nobody hears it, or nothing
    /// was written).
    struct AskingDecision: Sendable {
        var decision: AskedDecision
        var claimed: @Sendable (DecisionClaim?) -> Void
    }

    private let ledger: TransferLedger
    /// How decision deliveries are claimed, asked for each transaction; nil without a gateway
    /// (then the fan-out makes the events' deliveries, and no decision is claimed).
    private let claimTerms: (@Sendable () -> DecisionClaimTerms)?
    /// Told, after the commit, the endpoints with deliveries a write made.
    private let deliveriesMade: @Sendable (Set<String>) -> Void
    private let cookies: CookieStore
    /// `performing`: the writes taken from the queue, being written (see `isIdle`).
    private let queue = Mutex<(writes: [Write], isStopped: Bool, performing: [Write])>(([], false, []))
    /// Once a shutdown has begun, when failing writes are given up (see `givingUpPoint`):
    /// `shutdown`, the end of its grace period (`giveUpFailingWrites`); `stopped`,
    /// `patienceWhenStopping` after `stop()`.
    private let givingUp = Mutex<(shutdown: ContinuousClock.Instant?, stopped: ContinuousClock.Instant?)>((nil, nil))
    /// How long a write that first fails after a shutdown's grace period, or after `stop()`, is
    /// retried while the database is away: a shutdown must end even when it does not come back.
    private let patienceWhenStopping: Duration
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
        deliveriesMade: @escaping @Sendable (Set<String>) -> Void = { _ in },
        patienceWhenStopping: Duration = .seconds(5), finished: @escaping @Sendable () -> Void
    ) {
        self.patienceWhenStopping = patienceWhenStopping
        self.claimTerms = claimTerms
        self.deliveriesMade = deliveriesMade
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
            write.tellUnwritten()
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
    var isIdle: Bool { queue.withLock { $0.writes.isEmpty && $0.performing.isEmpty } }

    /// The tasks with an end or events queued or being written: their leases are still this
    /// instance's business, lapsed or not (`TransferLedger.reapExpiredLeases(holding:)`). An
    /// end queued while the database was away is written once it is back, not replaced by the
    /// reaper's -1005.
    var tasksWithUnwrittenWrites: [String] {
        let unwritten = queue.withLock { $0.writes + $0.performing }
        return unwritten.flatMap { write -> Set<String> in
            if case .heartbeat = write { return [] }
            return write.taskIDs
        }
    }

    /// Writes are refused from now on: after the final drain, or once what was left was given
    /// up (`giveUp`). Nothing more that waits to be written will be.
    var refusesWrites: Bool { queue.withLock { $0.isStopped } }

    /// Writes until `stop()`, then drains what is queued.
    func run() async {
        for await _ in rings {
            await drain()
        }
        await drain()
        queue.withLock { $0.isStopped = true }
        await drain()
    }

    /// A shutdown's grace period ends at `deadline`: a write still failing then is not tried
    /// again (see `givingUpPoint`), so that a database away all through the grace period costs
    /// that period, not the grace period and then `patienceWhenStopping` once more.
    func giveUpFailingWrites(at deadline: ContinuousClock.Instant) {
        givingUp.withLock { $0.shutdown = min($0.shutdown ?? deadline, deadline) }
    }

    /// Ends `run()` once what is queued is written, or given up after `patienceWhenStopping`
    /// of failed tries; later writes are refused. Cancelling `run()`'s task gives up at once
    /// what cannot be written at the first try.
    func stop() {
        givingUp.withLock { $0.stopped = $0.stopped ?? .now + patienceWhenStopping }
        doorbell.finish()
    }

    private func drain() async {
        while true {
            let writes = queue.withLock { queue in
                defer { queue.writes.removeAll() }
                queue.performing = queue.writes
                return queue.writes
            }
            guard !writes.isEmpty else { return }
            let groups = Self.coalescedGroups(writes)
            for (index, group) in groups.enumerated() {
                switch await perform(group.merged) {
                case .written:
                    continue
                case .refused:
                    // Refused, so nothing of it was written. Its writes go one by one, and only one
                    // refused by itself is set aside: a write the database will never take must not
                    // hold up every later one (events, ends, lease renewals) for good.
                    guard group.members.count > 1 else {
                        setAside(group.merged)
                        continue
                    }
                    for (memberIndex, member) in group.members.enumerated() {
                        switch await perform(member) {
                        case .written: continue
                        case .refused: setAside(member)
                        case .givenUp:
                            giveUp(Array(group.members[memberIndex...]) + groups[(index + 1)...].map(\.merged))
                            return
                        }
                    }
                case .givenUp:
                    giveUp(groups[index...].map(\.merged))
                    return
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

    /// Hands each waiting decision its claim, and the delivery loop the endpoints with new deliveries.
    private func hand(_ written: DeliveriesWritten, to asking: [AskingDecision]) {
        for waiting in asking { waiting.claimed(written.claims[waiting.decision.eventID]) }
        if !written.endpointIDs.isEmpty { deliveriesMade(written.endpointIDs) }
    }

    /// What became of a write.
    private enum Outcome {
        case written
        /// The database refuses what it carries (`PostgresError.refusesAgain`), `triesOfARefusedWrite` times.
        case refused
        /// Not written, and no more tries: the writer was cancelled, or a shutdown's deadline
        /// passed (`givingUpPoint`), while the database was away (or its pool closed).
        case givenUp
    }

    /// Performs one write, retrying while the database is unreachable, busy or full: dropping it
    /// would lose an event, and skipping ahead would reorder them. Tries are paced (10 ms doubling
    /// to 2 s) and their failures logged now and then: an outage of any length is waited out
    /// without a spin or a flood of log lines. Heartbeats are not retried (the next one
    /// supersedes them). A write that fails while making its events' deliveries or claiming
    /// decisions is tried again without either: the fan-out makes those deliveries, the decisions
    /// take the default (the queue sends their events after the grace period), and the write is
    /// not held up by them.
    private func perform(_ write: Write) async -> Outcome {
        var pacing = OutageRetryPacing()
        var firstFailure: ContinuousClock.Instant?
        var claiming = true
        var refusals = 0
        while true {
            // Taken for each try: the recorder's answered deliveries change meanwhile.
            let terms = claiming && write.writesEvents ? claimTerms?() : nil
            do {
                switch write {
                case .events(let events, let asking):
                    hand(try await ledger.record(events, asking: asking.map(\.decision), terms: terms), to: asking)
                case .finish(let outcomes, let events, let asking):
                    let (_, written) = try await ledger.finish(
                        outcomes, after: events, asking: asking.map(\.decision), terms: terms, resumeData: resumeData
                    )
                    finished()
                    hand(written, to: asking)
                case .cookies(let updates):
                    try await cookies.apply(updates)
                case .heartbeat(let progress, let reply):
                    let sentAt = ContinuousClock.now
                    do {
                        reply(try await ledger.heartbeat(progress, workers: workers, version: version), sentAt)
                    } catch {
                        logger.warning("heartbeat failed", metadata: ["error": "\(error)"])
                        reply(nil, sentAt)
                    }
                }
                if pacing.failures > 0 {
                    logger.notice("writing transfer state succeeded again", metadata: ["failedTries": "\(pacing.failures)"])
                }
                return .written
            } catch {
                if claiming, error is DeliveriesNotWritten {
                    logger.error("writing events with their deliveries failed; writing them without", metadata: ["error": "\(error)"])
                    claiming = false
                    continue
                }
                if PostgresError.refusesAgain(error) {
                    refusals += 1
                    if refusals >= Self.triesOfARefusedWrite { return .refused }
                }
                // A closed pool does not open again: nothing more can be written by this process.
                if (error as? PostgresError)?.kind == .poolClosed { return .givenUp }
                let retry = pacing.failed(at: .now)
                if let log = retry.log {
                    logger.warning("writing transfer state failed; retrying", metadata: [
                        "error": "\(error)", "failedTries": "\(log.failedTries)", "failedInAll": "\(log.failedInAll)",
                    ])
                }
                let failedAt = firstFailure ?? .now
                firstFailure = failedAt
                guard await pauseBeforeRetrying(retry.pause, firstFailure: failedAt) else { return .givenUp }
            }
        }
    }

    /// Waits before the next try; false when there is to be none: the writer's task was
    /// cancelled (a cancelled sleep returns at once, and the loop used to spin on it for as long
    /// as the database was away), or a shutdown's deadline for this write has passed.
    private func pauseBeforeRetrying(_ pause: Duration, firstFailure: ContinuousClock.Instant) async -> Bool {
        var pause = pause
        if let deadline = givingUpPoint(firstFailure: firstFailure) {
            let left = deadline - .now
            guard left > .zero else { return false }
            pause = min(pause, left)
        }
        do {
            try await Task.sleep(for: pause)
            return true
        } catch {
            return false
        }
    }

    /// When a write that first failed at `firstFailure` is given up; nil while no shutdown has
    /// begun (an outage of any length is waited out). A write already failing when the grace
    /// period ends is given up then: the database is away, and waiting longer only holds up the
    /// exit. One that first fails after it (an outcome written late, a checkpoint's fsync or a
    /// decision about caching, while the database served the shutdown until then) gets the whole
    /// `patienceWhenStopping` from its first failure, as before `stop()`; after `stop()`, at most
    /// that patience from the stop.
    private func givingUpPoint(firstFailure: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let (shutdown, stopped) = givingUp.withLock { $0 }
        let afterGracePeriod = shutdown.map { firstFailure < $0 ? $0 : firstFailure + patienceWhenStopping }
        return [afterGracePeriod, stopped].compactMap { $0 }.min()
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
        write.tellUnwritten()
    }

    /// Gives up what is left to write, at shutdown while the database is away: as if the
    /// process had been killed there. Nothing is lost that a kill would not leave recoverable:
    /// the transfers' leases lapse, and the reaper (here after a restart, or on another
    /// instance) completes or releases their tasks from their last checkpoint. Later writes
    /// are refused, as after the final drain.
    fileprivate func giveUp(_ writes: [Write]) {
        let queued = queue.withLock { queue in
            defer { queue.writes.removeAll() }
            (queue.isStopped, queue.performing) = (true, [])
            return queue.writes
        }
        let all = writes + queued
        logger.error("the database stayed away while stopping; writes of transfer state are given up and their leases left to lapse", metadata: [
            "tasks": "\(Set(all.flatMap(\.taskIDs)).sorted().joined(separator: ","))", "events": "\(all.reduce(0) { $0 + $1.eventCount })",
        ])
        all.forEach { $0.tellUnwritten() }
    }
}

extension LedgerWriter.Write {
    /// Whoever waits for the write's answer gets none: it is not written.
    func tellUnwritten() {
        switch self {
        case .events(_, let asking), .finish(_, _, let asking): asking.forEach { $0.claimed(nil) }
        case .heartbeat(_, let reply): reply(nil, .now)
        case .cookies: break
        }
    }

    /// The tasks the write is about.
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

    /// Whether the write may write events (whose deliveries it makes, and decisions it claims).
    var writesEvents: Bool {
        switch self {
        case .events, .finish: true
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
