/// A request field that Ferry refuses, with the path of the field ("configuration.timeoutIntervalForRequest")
/// and a sentence a person can act on. Becomes a 400 problem+json (or 413/422 where `status` says so).
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted path of the field, or "" for the body as a whole.
    public var field: String
    public var message: String
    public var status: Int

    public init(field: String, message: String, status: Int = 400) {
        self.field = field
        self.message = message
        self.status = status
    }

    public var description: String {
        field.isEmpty ? message : "\(field): \(message)"
    }
}
