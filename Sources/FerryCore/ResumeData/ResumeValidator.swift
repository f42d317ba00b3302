/// The validator sent in `If-Range` when resuming, so that the origin answers 206 only if the
/// representation has not changed since the partial file was written (and 200 otherwise).
public enum ResumeValidator: Hashable, Codable, Sendable {
    /// A strong entity tag, quotes included (`"abc"`). Weak tags (`W/"abc"`) are never used:
    /// RFC 9110 forbids them in `If-Range`, since byte ranges of "equivalent" bodies differ.
    case strongETag(String)
    /// A `Last-Modified` date, verbatim as the origin sent it.
    case lastModified(String)

    /// The value for the `If-Range` header.
    public var ifRangeValue: String {
        switch self {
        case .strongETag(let tag): return tag
        case .lastModified(let date): return date
        }
    }
}
