/// A session's or task's delegate: where its events are delivered as webhooks.
public struct DelegateSpec: Sendable, Equatable {
    public var url: String
    /// The signing secret the tenant chose (`whsec_…`); nil: Ferry generates one and shows it once.
    public var secret: String?
    /// The event types to deliver; nil: all of them.
    public var events: Set<EventType>?
    /// Deliveries to this URL in flight at once (across every instance); nil: the default.
    /// Decisions, and the earlier events a decision sends first, are not held back by it: they
    /// are bounded by the transfers paused on a decision.
    public var maximumInFlight: Int?

    /// Deliveries in flight to one endpoint: the default, and the most a delegate may ask for.
    public static let defaultMaximumInFlight = 16
    public static let maximumInFlightRange = 1...64

    public init(url: String, secret: String? = nil, events: Set<EventType>? = nil, maximumInFlight: Int? = nil) {
        self.url = url
        self.secret = secret
        self.events = events
        self.maximumInFlight = maximumInFlight
    }

    public init(validating reader: FieldReader, urlChecker: some URLSyntaxChecker) throws {
        let url = try reader.requiredString("url", maxLength: 8192)
        self.url = try urlChecker.check(url, field: reader.fieldPath("url")).url
        if let secret = try reader.string("secret", maxLength: 256, allowEmpty: false) {
            guard secret.hasPrefix("whsec_") else {
                throw reader.error("secret", "must be a Standard Webhooks secret: \"whsec_\" followed by base64 of 24 to 64 random bytes.")
            }
            self.secret = secret
        }
        if let elements = try reader.array("events", maxCount: EventType.allCases.count) {
            var events: Set<EventType> = []
            for (index, element) in elements.enumerated() {
                let field = "\(reader.fieldPath("events"))[\(index)]"
                guard case .string(let name) = element else {
                    throw ValidationError(field: field, message: "must be an event type string, not \(element.typeDescription).")
                }
                guard let type = EventType(rawValue: name) else {
                    throw ValidationError(field: field, message: "\"\(name)\" is not an event type; see the event catalogue in the README.")
                }
                events.insert(type)
            }
            self.events = events
        }
        maximumInFlight = try reader.integer("maximumInFlight", in: Self.maximumInFlightRange)
        try reader.finish()
    }
}
