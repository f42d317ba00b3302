/// A session's or task's delegate: where its events are delivered as webhooks.
public struct DelegateSpec: Sendable, Equatable {
    public var url: String
    /// The signing secret the tenant chose (`whsec_…`); nil: Ferry generates one and shows it once.
    public var secret: String?
    /// The event types to deliver; nil: all of them.
    public var events: Set<EventType>?

    public init(url: String, secret: String? = nil, events: Set<EventType>? = nil) {
        self.url = url
        self.secret = secret
        self.events = events
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
        try reader.finish()
    }
}
