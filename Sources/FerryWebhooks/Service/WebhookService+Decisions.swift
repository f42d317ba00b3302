import FerryCore
import FerryStore
import Foundation

extension WebhookService: DecisionGateway {
    public func decide(
        eventID: String, taskID: String, timeout: Duration, honouring: @escaping @Sendable (JSONValue) -> String?
    ) async -> JSONValue? {
        let timeout = min(max(timeout, .zero), configuration.maximumDecisionTimeout)
        let deadline = ContinuousClock.now + timeout
        let claim: ClaimedDelivery
        do {
            guard let claimed = try await ledger.claimDecision(eventID: eventID, taskID: taskID, lease: timeout + .seconds(5)) else {
                await recordDefaultDecision(eventID: eventID)
                return nil
            }
            claim = claimed
        } catch {
            logger.error("cannot prepare a decision", metadata: ["event": "\(eventID)", "error": "\(error)"])
            await recordDefaultDecision(eventID: eventID)
            return nil
        }
        // Earlier events of the task go first: make sure the fan-out has reached this event
        // and wait (within the timeout) until their deliveries are finished.
        fanOutBell.ring()
        decisionBell.ring()
        let startedAt = configuration.now()
        // Re-checked soon at first, then less often: a receiver that is slow with the earlier
        // deliveries should not cost a query every 10 ms for the whole timeout.
        var pause = Duration.milliseconds(10)
        do {
            while !(try await ledger.isDecisionClear(claim)) {
                guard deadline - ContinuousClock.now > .milliseconds(10) else {
                    let waited = AttemptReport(
                        startedAt: startedAt, duration: ContinuousClock.now - (deadline - timeout), statusCode: nil,
                        error: "not sent: earlier deliveries of this task were still unfinished; the default applied",
                        responseExcerpt: nil
                    )
                    try await ledger.record(waited, for: claim, decidedBy: "default") { _ in
                        DeliveryPlan(status: .failed, nextAttemptAt: nil, endpoint: .unchanged)
                    }
                    return nil
                }
                try await Task.sleep(for: min(pause, deadline - ContinuousClock.now))
                pause = min(pause * 2, .milliseconds(200))
            }
        } catch {
            logger.error("waiting to send a decision failed", metadata: ["event": "\(eventID)", "error": "\(error)"])
            await recordDefaultDecision(eventID: eventID)
            return nil
        }
        return await send(claim, before: deadline, honouring: honouring)
    }

    /// Records `decidedBy: "default"` on a decision event that could not be sent.
    private func recordDefaultDecision(eventID: String) async {
        do {
            try await ledger.recordDecision(eventID: eventID, decidedBy: "default")
        } catch {
            logger.error("cannot record a default decision", metadata: ["event": "\(eventID)", "error": "\(error)"])
        }
    }

    /// Sends the decision event and reads the reply; records the attempt without the reply.
    private func send(
        _ claim: ClaimedDelivery, before deadline: ContinuousClock.Instant, honouring: (JSONValue) -> String?
    ) async -> JSONValue? {
        let startedAt = configuration.now()
        let remaining = deadline - ContinuousClock.now
        var result = WebhookHTTPResult(
            statusCode: nil, retryAfter: nil, body: [], isBodyTruncated: false, failure: .timedOut(.zero), duration: .zero
        )
        if remaining > .milliseconds(10) {
            do {
                let message = try WebhookMessage(event: claim.event, secrets: claim.secrets, sentAt: startedAt)
                result = await transport.send(WebhookHTTPRequest(
                    url: claim.url, headerLines: message.headerLines, body: message.body, timeout: remaining
                ))
            } catch {
                result.failure = .transport("the endpoint's signing secret is unusable: \(error)")
            }
        }
        var reply = DecisionReply.parse(statusCode: result.statusCode, body: result.body, isTruncated: result.isBodyTruncated)
        // A reply Ferry cannot honour (e.g. `becomeStream`) is rejected, not silently read as the
        // default: the receiver answered, and the attempt says why its answer did not count.
        let unhonoured = reply.flatMap(honouring)
        if unhonoured != nil { reply = nil }
        let error: String? = if let failure = result.failure {
            failure.description + "; the default applied"
        } else if let unhonoured {
            "the reply was rejected: " + unhonoured + "; the default applied"
        } else if reply == nil {
            DecisionReply.rejection(statusCode: result.statusCode, body: result.body, isTruncated: result.isBodyTruncated) + "; the default applied"
        } else {
            nil
        }
        // The reply may carry credentials: neither it nor an excerpt of it is recorded or logged.
        let report = AttemptReport(startedAt: startedAt, duration: result.duration, statusCode: result.statusCode, error: error, responseExcerpt: nil)
        let outcome = AttemptOutcome(statusCode: result.statusCode, retryAfter: nil)
        let now = configuration.now()
        do {
            let applied = try await ledger.record(report, for: claim, decidedBy: reply == nil ? "default" : "receiver") { failingSince in
                self.plan(outcome, attemptNumber: claim.previousAttempts + 1, isDecision: true, failingSince: failingSince, now: now)
            }
            logDisabling(applied, endpointID: claim.endpointID)
        } catch {
            logger.error("recording a decision failed", metadata: ["event": "\(claim.event.id)", "error": "\(error)"])
        }
        return reply
    }
}
