import FerryCore

/// Who hears a task's events, looked up once when its transfer starts (`ClaimedTask.delegate`);
/// without one every decision takes URLSession's default without a call.
public struct DelegateSubscription: Sendable, Equatable {
    public var endpointID: String
    /// nil: every event type except the opt-in `dataTask.didReceiveData`.
    public var events: Set<EventType>?

    public init(endpointID: String, events: Set<EventType>?) {
        self.endpointID = endpointID
        self.events = events
    }

    public func subscribes(to type: EventType) -> Bool {
        DelegateEventFilter.subscribes(events, to: type)
    }
}

/// What the transfer engine asks of the webhooks when a decision event pauses a transfer.
public protocol DecisionGateway: Sendable {
    /// How the owner claims decision deliveries in the transaction that writes their events
    /// (`TransferLedger.record(_:asking:terms:)`), for a decision that waits at most `timeout`.
    func claimTerms(timeout: Duration) -> DecisionClaimTerms

    /// The owner's transaction that wrote events made deliveries for these endpoints (and
    /// committed): they may be claimed now.
    func deliveriesMade(forEndpoints endpointIDs: Set<String>)

    /// The decision event of `claim` (committed, its delivery claimed by the owner when it wrote
    /// the event) is delivered NOW by this instance, directly, not through the retry queue —
    /// after the task's earlier unfinished deliveries, which it sends itself, in order (waiting,
    /// within the timeout, only for those another attempt already has in flight). Returns the
    /// receiver's reply when it answered 2xx with a JSON object (≤ 64 KiB) within `timeout`
    /// (≤ 10 s) and `honouring` finds nothing to reject in it, else nil. `honouring` answers why
    /// Ferry cannot honour a reply (nil: it can): such a reply counts as no reply, and the attempt
    /// records the reason. Records on the delivery `decidedBy` ("receiver" or "default") and marks
    /// the delivery delivered or failed; never stores or logs the reply (it may carry credentials).
    ///
    /// Nil `claim`: the default applies at once; either nobody hears the event (the claim
    /// recorded `decidedBy: "default"`), or claiming failed and the queue sends the event after
    /// the grace period.
    func decide(
        _ claim: DecisionClaim?, timeout: Duration, honouring: @escaping @Sendable (JSONValue) -> String?
    ) async -> JSONValue?
}
