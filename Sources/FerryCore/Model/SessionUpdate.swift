/// A validated `PATCH /v1/sessions/{id}` body: `sessionDescription`, the one property of a
/// URLSession that may change after creation (its configuration is copied at creation).
public struct SessionUpdate: Sendable, Equatable {
    /// `.some(nil)` clears the description; nil keeps it.
    public var sessionDescription: String??

    public init(sessionDescription: String?? = nil) {
        self.sessionDescription = sessionDescription
    }

    public init(validating value: JSONValue) throws {
        let reader = try FieldReader(value)
        if let text = try reader.string("sessionDescription", maxLength: 4096) {
            sessionDescription = .some(text)
        } else if reader.isExplicitNull("sessionDescription") {
            sessionDescription = .some(nil)
        }
        try reader.finish()
    }
}
