/// Failures the store reports in domain terms, for the API to turn into problem+json.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No such object for this tenant (which includes: it belongs to another tenant).
    case notFound(resource: String)
    /// The object exists but the request conflicts with its state (e.g. an invalidated session);
    /// `field`, the request's field that named it, when one did.
    case conflict(String, field: String? = nil)
    /// An Idempotency-Key was reused with a different request body.
    case idempotencyKeyReused
    /// A referenced object (a blob, a partial file) is not usable.
    case invalidReference(field: String, message: String)

    public var description: String {
        switch self {
        case .notFound(let resource): "\(resource) not found"
        case .conflict(let message, _): message
        case .idempotencyKeyReused: "the Idempotency-Key was already used with a different request"
        case .invalidReference(let field, let message): "\(field): \(message)"
        }
    }
}
