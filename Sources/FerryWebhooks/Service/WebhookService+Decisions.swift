import FerryCore
import FerryStore
import Foundation

extension WebhookService: DecisionGateway {
    public func claimTerms(timeout: Duration) -> DecisionClaimTerms {
        DecisionClaimTerms(
            instanceID: ledger.instanceID, lease: decisionLease(timeout), decisionGrace: configuration.decisionGrace,
            answered: recorder.answeredDeliveryIDs()
        )
    }

    /// New deliveries (an owner's, or the fan-out's) ring the delivery loop unless every one is
    /// for an endpoint the last claim found full (`FullEndpoints`).
    public func deliveriesMade(forEndpoints endpointIDs: Set<String>) {
        if fullEndpoints.callForClaim(newDeliveriesFor: endpointIDs) { callForClaim() }
    }

    public func decide(
        _ claim: DecisionClaim?, timeout: Duration, honouring: @escaping @Sendable (JSONValue) -> String?
    ) async -> JSONValue? {
        // Without a claim the default applies at once (see `DecisionGateway.decide`).
        guard let claim else { return nil }
        // The decision's stream counted as in flight for its endpoint and tenant until now.
        defer { decisionEnded(onEndpoint: claim.decision.endpointID) }
        let eventID = claim.decision.event.id
        let timeout = decisionTimeout(timeout)
        let deadline = ContinuousClock.now + timeout
        let lease = decisionLease(timeout)
        // The task's earlier events go first (per-task order). This call sends them itself, at
        // once and in order, rather than waiting for the fan-out and the queue: a decision that
        // waited for a queue slot while holding one was how many paused transfers stalled each
        // other until their timeouts.
        let startedAt = configuration.now()
        var earlier = claim.earlier
        var pause = Duration.milliseconds(1)
        do {
            while true {
                switch earlier {
                case .none:
                    return await send(claim.decision, before: deadline, honouring: honouring)
                case .taken(let deliveries):
                    // Every earlier unfinished delivery (all were committed before the decision
                    // was claimed): once they are through, nothing else comes first.
                    // Those not sent go back at once: leased until the decision's lease ends, they
                    // would hold up the task's later events that long.
                    var allDelivered = true
                    for (index, delivery) in deliveries.enumerated() {
                        let remaining = deadline - ContinuousClock.now
                        guard remaining > .milliseconds(10) else {
                            allDelivered = false
                            await release(Array(deliveries[index...]))
                            break
                        }
                        guard await attempt(delivery, timeout: remaining, recording: .submitted).delivered else {
                            await release(Array(deliveries[(index + 1)...]))
                            try await recordUnsent(claim.decision, startedAt: startedAt, deadline: deadline, timeout: timeout,
                                                   why: "an earlier delivery of this task failed")
                            return nil
                        }
                    }
                    if allDelivered { return await send(claim.decision, before: deadline, honouring: honouring) }
                case .backingOff:
                    try await recordUnsent(claim.decision, startedAt: startedAt, deadline: deadline, timeout: timeout,
                                           why: "an earlier delivery of this task failed and waits for its retry")
                    return nil
                case .inFlight:
                    // Someone else's attempt of an earlier delivery: it ends within its timeout.
                    try await Task.sleep(for: min(pause, max(deadline - ContinuousClock.now, .zero)))
                    pause = min(pause * 2, .milliseconds(20))
                }
                guard deadline - ContinuousClock.now > .milliseconds(10) else {
                    try await recordUnsent(claim.decision, startedAt: startedAt, deadline: deadline, timeout: timeout,
                                           why: "earlier deliveries of this task were still unfinished")
                    return nil
                }
                earlier = try await ledger.takeEarlier(than: claim.decision, lease: lease, answered: recorder.answeredDeliveryIDs())
            }
        } catch {
            logger.error("sending a decision's earlier deliveries failed", metadata: ["event": "\(eventID)", "error": "\(error)"])
            // Its delivery ends failed, as when time ran out: left pending, it would be sent as an
            // ordinary delivery once its lease ended, long after the default applied.
            do {
                try await recordUnsent(claim.decision, startedAt: startedAt, deadline: deadline, timeout: timeout,
                                       why: "sending the task's earlier deliveries failed")
            } catch {
                await recordDefaultDecision(eventID: eventID)
            }
            return nil
        }
    }

    /// The decision's wait, within the service's limit.
    private func decisionTimeout(_ asked: Duration) -> Duration {
        min(max(asked, .zero), configuration.maximumDecisionTimeout)
    }

    /// A decision delivery's lease outlasts its wait, so no queue takes it while it is sent.
    private func decisionLease(_ timeout: Duration) -> Duration {
        decisionTimeout(timeout) + .seconds(5)
    }

    /// Records a decision that was not sent because what must precede it did not get through.
    private func recordUnsent(
        _ decision: ClaimedDelivery, startedAt: Date, deadline: ContinuousClock.Instant, timeout: Duration, why: String
    ) async throws {
        let waited = AttemptReport(
            startedAt: startedAt, duration: ContinuousClock.now - (deadline - timeout), statusCode: nil,
            error: "not sent: \(why); the default applied", responseExcerpt: nil
        )
        try await ledger.record(waited, for: decision, decidedBy: "default") { _ in
            DeliveryPlan(status: .failed, nextAttemptAt: nil, endpoint: .unchanged)
        }
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
        let isSent = remaining > .milliseconds(10)
        if isSent {
            do {
                let message = try WebhookMessage(event: claim.event, secrets: claim.secrets, sentAt: startedAt, cursors: eventCursors)
                result = await transport.send(WebhookHTTPRequest(
                    tenantID: claim.event.tenantID, url: claim.url, headerLines: message.headerLines, body: message.body, timeout: remaining
                ))
            } catch {
                result.failure = .transport("the endpoint's signing secret is unusable: \(error)")
            }
        }
        var reply = DecisionReply.parse(statusCode: result.statusCode, body: result.body, isTruncated: result.isBodyTruncated)
        // A reply Ferry cannot honour (e.g. `becomeStream`, a CONNECT request) is rejected, not
        // silently read as the default: the receiver answered, and the attempt says why its
        // answer did not count.
        let unhonoured = reply.flatMap { DecisionReplies.refusal(of: $0, toEventOfType: claim.event.type) ?? honouring($0) }
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
        let decidedBy = reply == nil ? "default" : "receiver"
        // A decision sent is an attempt like any other for the operator's count.
        if isSent { (outcome.isSuccess ? Self.attemptsDelivered : Self.attemptsFailed).increment() }
        do {
            if outcome.isSuccess, let statusCode = result.statusCode {
                // The transfer goes on now; the record follows (see `submit`).
                let delivered = DeliveredAttempt(
                    deliveryID: claim.deliveryID, sessionID: claim.event.sessionID, leaseToken: claim.leaseToken,
                    startedAt: startedAt, duration: result.duration,
                    statusCode: statusCode, error: error, responseExcerpt: nil, decidedBy: decidedBy
                )
                await submit(delivered)
                return reply
            }
            let applied = try await ledger.record(report, for: claim, decidedBy: decidedBy) { failingSince in
                self.plan(outcome, attemptNumber: claim.previousAttempts + 1, isDecision: true, failingSince: failingSince, now: now)
            }
            logDisabling(applied, endpointID: claim.endpointID)
        } catch {
            logger.error("recording a decision failed", metadata: ["event": "\(claim.event.id)", "error": "\(error)"])
        }
        return reply
    }
}
