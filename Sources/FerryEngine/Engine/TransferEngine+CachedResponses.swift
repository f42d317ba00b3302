import FerryCore
import FerryStore
import Foundation

extension TransferEngine {
    /// What URLSession tells a data task's delegate about a response loaded from the URL cache
    /// (fresh, or confirmed by a 304), as about any other: `dataTask.didReceiveResponse` with the
    /// cached response (a decision: the delegate may cancel the task or make it a download), then,
    /// when it opted in, the body as `dataTask.didReceiveData`. No `willCacheResponse`: nothing new
    /// is stored. Before, such a task went from `didCreateTask` to its metrics without a word of
    /// its response, and a delegate that reads bodies from its data events got nothing.
    ///
    /// Answers the task's completion as the decision leaves it, and the events to write before its
    /// end (the decision event itself is already queued when the receiver was asked).
    func answeredFromCache(_ completion: TaskCompletion, of ended: EndedTransfer) async -> (TaskCompletion, [OwnerEvent]) {
        let job = ended.job
        guard ended.notModified, job.claim.kind == .data, completion.error == nil,
              let body = completion.responseBody, let response = completion.response
        else { return (completion, []) }
        let event = OwnerEvent(
            lease: job.lease, type: .dataTaskDidReceiveResponse,
            data: ["response": (try? JSONValue(encoding: response)) ?? .null], id: IDs.make("evt")
        )
        var events: [OwnerEvent] = []
        var disposition: DecisionReplies.Response?
        if job.decisions.contains(.dataTaskDidReceiveResponse), let gateway {
            let claim = await writer.enqueueClaiming(event).value()
            let reply = await gateway.decide(claim, timeout: configuration.decisionTimeout) { reply in
                DecisionReplies.rejection(of: reply, to: .dataTaskDidReceiveResponse, proposed: TransferRequest(url: ""), urlChecker: DecisionURLChecker())
            }
            disposition = DecisionReplies.response(reply)
        } else {
            events.append(event.decidedByDefault)
        }
        var answered = completion
        switch disposition {
        case .cancel:
            answered.responseBody = nil
            answered.bytesReceived = 0
            answered.error = TransferError(code: .cancelled, failingURL: ended.currentRequest.url)
        case .becomeDownload:
            // Told once the file is in place: a task whose file could not be written stays a data task.
            do {
                answered.downloadFile = try await writeDownload(body, ended: ended)
            } catch {
                var failed = downloadFailure(error, ended: ended)
                (failed.response, failed.metrics) = (completion.response, completion.metrics)
                return (failed, events)
            }
            answered.responseBody = nil
            answered.becameDownload = true
            let size = Int64(body.count)
            events.append(OwnerEvent(
                lease: job.lease, type: .dataTaskDidBecomeDownloadTask, data: ["downloadTask": ["id": .string(job.taskID), "kind": "download"]]
            ))
            events.append(OwnerEvent(lease: job.lease, type: .downloadTaskDidWriteData, data: Self.writeDataPayload(written: size, total: size, expected: size)))
        case .allow, nil:
            if job.receivesData { events += DataEvents.events(carrying: body, from: 0, lease: job.lease) }
        }
        return (answered, events)
    }

    /// A data task's body read from the URL cache counts in the memory budget, as a body from
    /// the network does, until its end is queued: its didReceiveResponse decision may hold it
    /// that long (up to the decision timeout), and thousands of tasks may be answered from the
    /// cache at once. Nil when the task's body does not come from the cache; `refusal` the
    /// task's -1103 when the budget is spent (the body is then not read).
    func holdCachedBody(of ended: EndedTransfer) -> (reservation: MemoryBudget.Reservation, refusal: TransferError?)? {
        // Only a transfer that finished reads the cached body: one cancelled or stopped after
        // its 304 ends as such, not with -1103.
        guard case .finished = ended.end, ended.notModified, ended.job.claim.kind == .data, let budget = ended.job.memory,
              let entry = ended.job.cache?.entry
        else { return nil }
        let reservation = MemoryBudget.Reservation(budget: budget, tenantID: ended.job.claim.tenantID)
        let fits = reservation.grow(by: Int(clamping: entry.bodySize))
        return (reservation, fits ? nil : budget.spent(failingURL: ended.currentRequest.url))
    }
}
