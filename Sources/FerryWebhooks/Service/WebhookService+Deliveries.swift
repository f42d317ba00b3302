import FerryCore
import FerryStore
import Foundation
import Metrics

extension WebhookService {
    /// Claims due deliveries while there is room in flight and sends each as its own child
    /// task; the curl thread runs them side by side, so none waits for another's endpoint.
    /// Claims when asked (`callForClaim`), at the idle poll or when a delivery falls due, and when
    /// room an answered decision may have freed found no waiting stream to take it here.
    func runDeliveries() async {
        await withDiscardingTaskGroup { group in
            var claimDueAt = ContinuousClock.now
            while !shouldStop {
                await checkFinishedEvents()
                let roomLeft = await handOverRoomOfEndedDecisions(in: &group)
                if shouldStop { break }
                let asked = claimWanted.exchange(false, ordering: .acquiringAndReleasing)
                guard asked || roomLeft || ContinuousClock.now >= claimDueAt else {
                    await deliveryBell.wait(timeout: claimDueAt - .now)
                    continue
                }
                var wait = configuration.idlePollInterval
                let room = configuration.maximumInFlight - inFlight.load(ordering: .acquiring)
                if room > 0 {
                    do {
                        let limits = WebhookLedger.ClaimLimits(
                            total: room, perEndpoint: configuration.maximumInFlightPerEndpoint,
                            perTenant: configuration.maximumInFlightPerTenant, lease: configuration.leaseDuration
                        )
                        let leasedAt = ContinuousClock.now
                        let generation = fullEndpoints.generation
                        claimsMade.add(1, ordering: .relaxed)
                        Self.claims.increment()
                        let (claimed, left, full, nextDue) = try await ledger.claimDue(limits, answered: recorder.answeredDeliveryIDs())
                        let byEndpoint = Dictionary(grouping: left, by: \.endpointID).mapValues { CandidateQueue($0) }
                        candidates.withLock { $0 = byEndpoint }
                        fullEndpoints.claimed(full: full, since: generation)
                        headsLeftBesidesFullEndpoints.store(left.contains { !full.contains($0.endpointID) }, ordering: .releasing)
                        for claim in claimed {
                            startSlot([claim], leasedAt: leasedAt, in: &group)
                        }
                        if claimed.count == room {
                            // There may be more: claim again at once.
                            claimWanted.store(true, ordering: .releasing)
                            continue
                        }
                        if let nextDue, nextDue > .zero { wait = min(wait, nextDue) }
                    } catch {
                        logger.error("claiming webhook deliveries failed", metadata: ["error": "\(error)"])
                    }
                }
                claimDueAt = .now + wait
                await deliveryBell.wait(timeout: wait)
            }
        }
        await checkFinishedEvents()
    }

    /// Sends a leased run of a stream, and what follows it (`deliverStream`), as a child task
    /// that counts in flight until it ends; its end frees room and asks for a claim.
    private func startSlot(_ run: [ClaimedDelivery], leasedAt: ContinuousClock.Instant, in group: inout DiscardingTaskGroup) {
        inFlight.add(1, ordering: .acquiringAndReleasing)
        group.addTask {
            await self.deliverStream(from: run, leasedAt: leasedAt)
            self.inFlight.subtract(1, ordering: .acquiringAndReleasing)
            self.fullEndpoints.roomFreed()
            self.callForClaim()
        }
    }

    /// A decision was answered (or given up): its stream no longer counts in flight for its
    /// endpoint, and the delivery loop gives the room, if the endpoint is below its limit, to a
    /// stream waiting there.
    func decisionEnded(onEndpoint endpointID: String) {
        decisionsEnded.withLock { $0.append(endpointID) }
        deliveryBell.ring()
    }

    /// Gives the room each decision ended since the last turn freed to the next stream its
    /// endpoint's last claim left waiting, as a slot whose stream runs out does, while the instance
    /// has room for more slots and the endpoint and its tenant are below their limits
    /// (`claimOneOf`). A claim reads and ranks every pending delivery: in bench/decisions.sh's
    /// data tasks (two decisions a task, their endpoint full) one ran for nearly every decision,
    /// and most took nothing. Returns whether some room may be left for a claim to find: no
    /// candidate took it, or the endpoint is still full (decisions are sent whatever the limit)
    /// while the last claim left heads for other reasons than full endpoints (a tenant's limit,
    /// the instance's, a lock), which the tenant's freed room may be for.
    private func handOverRoomOfEndedDecisions(in group: inout DiscardingTaskGroup) async -> Bool {
        let endpoints = decisionsEnded.withLock { ended in
            defer { ended.removeAll() }
            return ended
        }
        var roomLeft = false
        var stillFull = false
        for endpointID in endpoints {
            let offered = shouldStop || inFlight.load(ordering: .acquiring) >= configuration.maximumInFlight
                ? [] : takeCandidates(of: endpointID)
            guard !offered.isEmpty else {
                roomLeft = true
                continue
            }
            do {
                let leasedAt = ContinuousClock.now
                let (room, used) = try await ledger.claimOneOf(
                    offered, limit: Self.streamRun, lease: configuration.leaseDuration, answered: recorder.answeredDeliveryIDs(),
                    perEndpoint: configuration.maximumInFlightPerEndpoint, perTenant: configuration.maximumInFlightPerTenant
                )
                giveBack(offered.dropFirst(used), of: endpointID)
                switch room {
                case .taken(let run): startSlot(run, leasedAt: leasedAt, in: &group)
                case .full: stillFull = true
                case .noCandidate: roomLeft = true
                }
            } catch {
                giveBack(offered[...], of: endpointID)
                logger.error("taking a waiting stream for an ended decision's room failed", metadata: ["error": "\(error)"])
                roomLeft = true
            }
        }
        if roomLeft { fullEndpoints.roomFreed() }
        return roomLeft || (stillFull && headsLeftBesidesFullEndpoints.load(ordering: .acquiring))
    }

    /// Attempts the claimed delivery, then the next ones of its task's stream (`claimNext`), in
    /// order, one at a time, for as long as each is answered 2xx and more are due. A claim across
    /// every pending delivery costs tens of milliseconds, far more than an attempt to a nearby
    /// receiver; so does waiting for each record: a slot that waited for either between two
    /// events of a busy stream stood idle most of the time. Records are written together
    /// meanwhile; the next event is sent once the previous one was answered.
    ///
    /// When the stream has nothing more, the slot takes a stream the last claim left for want of
    /// room (`claimNext(orOneOf:)`, up to `streamSwitches` times, and only while the instance has room
    /// for more slots, so that the claim's round-robin across endpoints and tenants decides when
    /// slots are scarce): a claim reads every pending delivery, and every freed slot waiting for
    /// one was what a backlog's drain spent PostgreSQL's time on.
    ///
    /// A slot's answered delivery is handed to the recorder only once the slot has taken its
    /// stream's next ones (or another stream, or found none): until then its lease stands, so that
    /// its stream still counts as in flight everywhere. Were it written first, another claim (here
    /// or on another instance) could give the endpoint's slot to a new stream while this slot
    /// went on too.
    ///
    /// `leasedAt`: when the claim of `run` was sent (its leases end a lease's length after).
    private func deliverStream(from run: [ClaimedDelivery], leasedAt: ContinuousClock.Instant) async {
        var run = run
        var leasedAt = leasedAt
        var isFreshLease = true
        var switches = 0
        while !run.isEmpty {
            // A run's leases end together and nothing renews them: a delivery sent after its
            // lease ended could be sent again by another slot meanwhile, out of order and beyond
            // the endpoint's limit. With a slow receiver the rest goes back, and a claim takes
            // the stream up again where this slot stopped. A request ends within its timeout, and
            // a tenth of the lease is the margin. The first of a lease is always sent (a request's
            // timeout is at most a third of the lease).
            let leaseLeft = leasedAt + configuration.leaseDuration - ContinuousClock.now
            guard isFreshLease || leaseLeft > configuration.requestTimeout + configuration.leaseDuration / 10 else {
                await release(run)
                return
            }
            isFreshLease = false
            let claim = run.removeFirst()
            let (delivered, answered) = await attempt(claim, recording: .heldByCaller)
            guard delivered, !shouldStop else {
                if let answered { await submit(answered) }
                await release(run)
                return
            }
            guard run.isEmpty else {
                if let answered { await submit(answered) }
                continue
            }
            do {
                let mayGoOn = switches < Self.streamSwitches && inFlight.load(ordering: .acquiring) < configuration.maximumInFlight
                let offered = mayGoOn ? takeCandidates(of: claim.endpointID) : []
                (leasedAt, isFreshLease) = (ContinuousClock.now, true)
                let (next, used) = try await ledger.claimNext(
                    after: claim, limit: Self.streamRun, lease: configuration.leaseDuration,
                    orOneOf: offered, answered: offered.isEmpty ? [] : recorder.answeredDeliveryIDs()
                )
                giveBack(offered.dropFirst(used), of: claim.endpointID)
                if used > 0 { switches += 1 }
                run = next
            } catch {
                logger.error("claiming a stream's next deliveries failed", metadata: ["error": "\(error)"])
            }
            if let answered { await submit(answered) }
        }
    }

    /// How many other streams a slot goes on to before it ends.
    static let streamSwitches = 64

    /// The first few heads the last claim left for this endpoint, taken out of the list.
    private func takeCandidates(of endpointID: String) -> [DeliveryCandidate] {
        candidates.withLock { byEndpoint in byEndpoint[endpointID]?.take(Self.candidatesPerSwitch) ?? [] }
    }

    /// Those not looked at go back, first in line.
    private func giveBack(_ unused: ArraySlice<DeliveryCandidate>, of endpointID: String) {
        guard !unused.isEmpty else { return }
        candidates.withLock { byEndpoint in byEndpoint[endpointID, default: CandidateQueue([])].giveBack(unused) }
    }

    /// Candidates one switch looks at, at most: most are still good; some another slot or
    /// instance took meanwhile.
    static let candidatesPerSwitch = 8

    /// How many of a stream's next deliveries a slot takes at once. A run counts as one request
    /// in flight (the claim counts streams, not leases); when leases were counted, a slot holding
    /// a run of five kept four other streams from being claimed (webhooks.sh: 241 events/s with
    /// runs of 16, 394 with 1).
    static let streamRun = 16

    func release(_ unused: [ClaimedDelivery]) async {
        do {
            try await ledger.releaseLeases(of: unused)
        } catch {
            logger.warning("giving back unused delivery leases failed; they expire", metadata: ["error": "\(error)"])
        }
    }

    func checkFinishedEvents() async {
        let sessionIDs = sessionsToCheckForFinishedEvents.withLock { sessions in
            defer { sessions.removeAll() }
            return sessions.sorted()
        }
        guard !sessionIDs.isEmpty else { return }
        do {
            try await ledger.finishEventsIfDone(sessionIDs: sessionIDs)
        } catch {
            logger.error("checking for finished background sessions failed", metadata: ["error": "\(error)"])
            sessionsToCheckForFinishedEvents.withLock { $0.formUnion(sessionIDs) }
        }
    }

    /// Made once, as the engine's metrics are: making a metric asks the backend's registry
    /// every time, and attempts come by the hundred a second.
    static let attemptsDelivered = Counter(label: "ferry_webhook_attempts_total", dimensions: [("outcome", "delivered")])
    static let attemptsFailed = Counter(label: "ferry_webhook_attempts_total", dimensions: [("outcome", "failed")])
    private static let claims = Counter(label: "ferry_webhook_claims_total")

    /// What becomes of an attempt answered 2xx (a failure is always recorded before `attempt` returns).
    enum Recording {
        /// Recorded before `attempt` returns.
        case awaited
        /// Handed to the recorder; written with others soon (a decision's earlier deliveries,
        /// whose record follows as the decision's own does: see `DeliveredAttemptRecorder.submit`).
        case submitted
        /// Handed back to the caller, who submits it (`submit`) when it may be written.
        case heldByCaller
    }

    /// One attempt of a queued delivery: sign, send, record, plan the next step. Returns whether
    /// it was delivered, and with `.heldByCaller` its record for the caller to submit.
    func attempt(
        _ claim: ClaimedDelivery, timeout: Duration? = nil, recording: Recording = .awaited
    ) async -> (delivered: Bool, held: DeliveredAttempt?) {
        let startedAt = configuration.now()
        let result: WebhookHTTPResult
        do {
            let message = try WebhookMessage(event: claim.event, secrets: claim.secrets, sentAt: startedAt, cursors: eventCursors)
            result = await transport.send(WebhookHTTPRequest(
                tenantID: claim.event.tenantID, url: claim.url, headerLines: message.headerLines, body: message.body,
                timeout: min(timeout ?? configuration.requestTimeout, configuration.requestTimeout)
            ))
        } catch {
            result = WebhookHTTPResult(
                statusCode: nil, retryAfter: nil, body: [], isBodyTruncated: false,
                failure: .transport("the endpoint's signing secret is unusable: \(error)"), duration: .zero
            )
        }
        // Shutting down: the lease expires and another attempt (here or elsewhere) follows.
        if result.failure == .shuttingDown { return (false, nil) }
        // A Retry-After date is measured from the moment the next attempt is planned from.
        let now = configuration.now()
        let outcome = AttemptOutcome(
            statusCode: result.statusCode, retryAfter: result.retryAfter.flatMap { RetryAfter.parse($0, now: now) }
        )
        // A decision's reply may carry credentials or a private key: it is never recorded, also
        // when the decision goes out here (taken over from a lost instance, or retried by the tenant).
        let report = AttemptReport(
            startedAt: startedAt, duration: result.duration, statusCode: result.statusCode,
            error: Self.errorText(result), responseExcerpt: claim.isDecision ? nil : excerpt(of: result.body)
        )
        if outcome.isSuccess, let statusCode = result.statusCode {
            let delivered = DeliveredAttempt(
                deliveryID: claim.deliveryID, sessionID: claim.event.sessionID, leaseToken: claim.leaseToken, startedAt: startedAt,
                duration: result.duration, statusCode: statusCode, error: nil, responseExcerpt: report.responseExcerpt
            )
            Self.attemptsDelivered.increment()
            switch recording {
            case .heldByCaller:
                return (true, delivered)
            case .submitted:
                await submit(delivered)
                return (true, nil)
            case .awaited:
                do {
                    return (try await recorder.record(delivered), nil)
                } catch {
                    logger.error("recording a webhook attempt failed", metadata: ["delivery": "\(claim.deliveryID)", "error": "\(error)"])
                    return (false, nil)
                }
            }
        }
        do {
            // Once more if the first fails (a deadlock or a dropped connection): unrecorded, the
            // delivery stays leased until its lease ends, and its task's later events wait as long.
            let record = {
                try await self.ledger.record(report, for: claim) { failingSince in
                    self.plan(outcome, attemptNumber: claim.previousAttempts + 1, isDecision: false, failingSince: failingSince, now: now)
                }
            }
            let applied: DeliveryPlan?
            do {
                applied = try await record()
            } catch {
                logger.warning("recording a webhook attempt failed; trying again", metadata: ["delivery": "\(claim.deliveryID)", "error": "\(error)"])
                applied = try await record()
            }
            logDisabling(applied, endpointID: claim.endpointID)
            (outcome.isSuccess ? Self.attemptsDelivered : Self.attemptsFailed).increment()
            sessionsToCheckForFinishedEvents.withLock { _ = $0.insert(claim.event.sessionID) }
            return (applied?.status == .delivered, nil)
        } catch {
            logger.error("recording a webhook attempt failed", metadata: ["delivery": "\(claim.deliveryID)", "error": "\(error)"])
            return (false, nil)
        }
    }

    /// Has an attempt answered 2xx written without waiting for it: by the recorder, or here
    /// once the recorder is closed (shutting down).
    func submit(_ delivered: DeliveredAttempt) async {
        guard !recorder.submit(delivered) else { return }
        do {
            _ = try await ledger.recordDelivered([delivered])
        } catch {
            logger.error("recording a webhook attempt failed", metadata: ["delivery": "\(delivered.deliveryID)", "error": "\(error)"])
        }
    }

    /// An operator wants to know when an endpoint stops receiving (the tenant sees it in the API).
    func logDisabling(_ plan: DeliveryPlan?, endpointID: String) {
        guard case .disable(let reason)? = plan?.endpoint else { return }
        logger.warning("webhook endpoint disabled", metadata: ["endpoint": "\(endpointID)", "reason": "\(reason)"])
    }

    /// Why an attempt failed, in words for the tenant; nil for a 2xx.
    static func errorText(_ result: WebhookHTTPResult) -> String? {
        if let failure = result.failure { return failure.description }
        guard let status = result.statusCode else { return "no answer" }
        switch status {
        case 200..<300: return nil
        case 300..<400: return "answered \(status); redirects are not followed"
        default: return "answered \(status)"
        }
    }

    /// The start of a notification's response, as text, for the attempt record.
    func excerpt(of body: [UInt8]) -> String? {
        guard !body.isEmpty, configuration.responseExcerptBytes > 0 else { return nil }
        var prefix = Array(body.prefix(configuration.responseExcerptBytes))
        // Never cut a UTF-8 sequence in half (a character is at most four bytes).
        for _ in 0..<3 where !prefix.isEmpty && String(validating: prefix, as: UTF8.self) == nil {
            prefix.removeLast()
        }
        let text = String(decoding: prefix, as: UTF8.self).replacingOccurrences(of: "\u{0}", with: "")
        return text.isEmpty ? nil : text
    }
}
