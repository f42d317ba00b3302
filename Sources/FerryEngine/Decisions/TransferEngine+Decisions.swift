import FerryCore
import FerryStore
import Foundation

extension TransferEngine {
    /// Asks the receiver about a decision event that is in the log, whose delivery was claimed
    /// when it was written (within `decisionTimeout`), and hands the decision to the waiting transfer.
    func askReceiver(_ request: DecisionRequest, claim: DecisionClaim?) async {
        let taskID = request.event.lease.taskID
        let (type, proposed) = (request.event.type, request.proposedRequest ?? TransferRequest(url: ""))
        let reply = await gateway?.decide(claim, timeout: configuration.decisionTimeout) { reply in
            DecisionReplies.rejection(of: reply, to: type, proposed: proposed, urlChecker: DecisionURLChecker())
        }
        guard let outcome = DecisionOutcome(reply: reply, to: request),
              let worker = book.withLock({ $0.worker(of: taskID) })
        else { return }
        // Only for a transfer still waiting: one that ended meanwhile was not paused until now.
        EngineMetrics.decisionPause(decidedByReceiver: reply != nil).record(duration: .now - request.pausedAt)
        workers.withLock { $0[worker] }.send(.decided(taskID: taskID, eventID: request.event.id, outcome))
    }

    /// `dataTask.willCacheResponse`, before a data task's response is stored: the receiver may
    /// keep it out of the cache (`{"cachedResponse": null}`).
    func mayCache(_ entry: CachedResponse, for ended: EndedTransfer) async -> Bool {
        guard ended.job.claim.kind != .download else { return true }
        let event = OwnerEvent(
            lease: ended.job.lease, type: .dataTaskWillCacheResponse,
            data: [
                "proposedResponse": ["response": (try? JSONValue(encoding: entry.responseSnapshot(now: Date()))) ?? .null, "storagePolicy": "allowed"],
            ],
            id: IDs.make("evt")
        )
        guard ended.job.decisions.contains(.dataTaskWillCacheResponse), let gateway else {
            // Written with the task's end, which this queue keeps after it.
            writer.enqueue(.events([event.decidedByDefault]))
            return true
        }
        let pausedAt = ContinuousClock.now
        let claim = await writer.enqueueClaiming(event).value()
        let reply = await gateway.decide(claim, timeout: configuration.decisionTimeout) { reply in
            DecisionReplies.rejection(of: reply, to: .dataTaskWillCacheResponse, proposed: TransferRequest(url: ""), urlChecker: DecisionURLChecker())
        }
        EngineMetrics.decisionPause(decidedByReceiver: reply != nil).record(duration: .now - pausedAt)
        return DecisionReplies.allowsCaching(reply) ?? true
    }

    /// What the task's delegate subscribes to that changes how the transfer runs (decision
    /// events, and the opt-in `dataTask.didReceiveData`), looked up when the transfer starts.
    func subscribe(_ job: inout TransferJob) {
        guard gateway != nil, let subscription = job.claim.delegate else { return }
        job.decisions = Set(EventType.allCases.filter { $0.isDecision && subscription.subscribes(to: $0) })
        // A background session always follows redirects: URLSession does not ask its delegate
        // (the event is still written, decided by the default).
        if job.claim.configuration.kind == .background { job.decisions.remove(.taskWillPerformHTTPRedirection) }
        job.receivesData = subscription.subscribes(to: .dataTaskDidReceiveData)
    }

}

extension OwnerEvent {
    /// The decision event as written when nobody is asked: URLSession's default decided it.
    var decidedByDefault: OwnerEvent {
        var event = self
        event.decidedBy = "default"
        return event
    }
}
