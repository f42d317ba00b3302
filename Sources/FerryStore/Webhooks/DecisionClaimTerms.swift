import FerryCore

/// A decision event whose delivery is to be claimed for this instance, in the transaction that
/// writes it (`TransferLedger.record(_:asking:terms:)`).
public struct AskedDecision: Sendable {
    public var eventID: String
    public var taskID: String

    public init(eventID: String, taskID: String) {
        self.eventID = eventID
        self.taskID = taskID
    }
}

/// How this instance claims decision deliveries, from the webhook service
/// (`DecisionGateway.claimTerms`): taken fresh for each transaction, since `answered` changes
/// with every recorded attempt.
public struct DecisionClaimTerms: Sendable {
    /// Whose lease the claimed deliveries carry.
    public var instanceID: String
    public var lease: Duration
    /// How long the fan-out leaves a decision event's delivery to its owner.
    public var decisionGrace: Duration
    /// This instance's deliveries answered 2xx and not yet recorded: through, for the order.
    public var answered: [String]

    public init(instanceID: String, lease: Duration, decisionGrace: Duration, answered: [String]) {
        self.instanceID = instanceID
        self.lease = lease
        self.decisionGrace = decisionGrace
        self.answered = answered
    }
}
