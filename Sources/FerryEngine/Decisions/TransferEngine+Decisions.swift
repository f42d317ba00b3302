import FerryCore
import FerryStore
import Foundation

extension TransferEngine {
    /// Writes a decision event, then asks the receiver (within `decisionTimeout`) when the
    /// delegate subscribes to it, and hands the decision to the waiting transfer. Without a
    /// subscription the event records that URLSession's default decided.
    func decide(_ request: DecisionRequest) async {
        await commit(request.event)
        guard let eventID = request.event.id else { return }
        let taskID = request.event.lease.taskID
        guard request.asksReceiver else {
            await gateway?.recordDefaultDecision(eventID: eventID)
            return
        }
        let reply = await gateway?.decide(eventID: eventID, taskID: taskID, timeout: configuration.decisionTimeout)
        guard let outcome = DecisionOutcome(reply: reply, to: request),
              let worker = book.withLock({ $0.worker(of: taskID) })
        else { return }
        workers.withLock { $0[worker] }.send(.decided(taskID: taskID, outcome))
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
        await commit(event)
        guard let eventID = event.id else { return true }
        guard ended.job.decisions.contains(.dataTaskWillCacheResponse), let gateway else {
            await gateway?.recordDefaultDecision(eventID: eventID)
            return true
        }
        let reply = await gateway.decide(eventID: eventID, taskID: ended.job.taskID, timeout: configuration.decisionTimeout)
        return DecisionReplies.allowsCaching(reply) ?? true
    }

    /// What the task's delegate subscribes to that changes how the transfer runs (decision
    /// events, and the opt-in `dataTask.didReceiveData`), looked up when the transfer starts.
    func subscribe(_ job: inout TransferJob) async {
        guard let gateway, let subscription = try? await gateway.subscription(forTask: job.taskID) else { return }
        job.decisions = Set(EventType.allCases.filter { $0.isDecision && subscription.subscribes(to: $0) })
        job.receivesData = subscription.subscribes(to: .dataTaskDidReceiveData)
    }

    private func commit(_ event: OwnerEvent) async {
        await withCheckedContinuation { continuation in
            writer.enqueue(.decision(event, committed: { continuation.resume() }))
        }
    }
}
