/// What the 206 a resumed download appends says it carries: the body is held to its
/// `Content-Range` as it arrives and when it ends.
///
/// curl checks a body against its `Content-Length` only (a shorter one is CURLE_PARTIAL_FILE),
/// and knows nothing of ranges since Ferry sends `Range` itself: a chunked or close-delimited
/// body can run past its range or stop before it, and a range can stop before the
/// representation does (RFC 9110 lets a server send less than asked). Appended as they came,
/// those made a file of the right size with other bytes in it, or a short file.
public struct ResumedRange: Equatable, Sendable {
    /// The bytes the response says it carries.
    public let range: ClosedRange<Int64>
    /// The representation's complete length, from the response or from the partial file's
    /// checkpoint; `nil` only when neither knows (and `ResumeDecision` refused such a 206).
    public let completeLength: Int64?

    public init(range: ClosedRange<Int64>, completeLength: Int64?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// How a body that has ended left the file.
    public enum End: Equatable, Sendable {
        /// The file holds the representation to its last byte.
        case complete
        /// The body stopped before the last byte of its range.
        case shortOfRange
        /// The body was its whole range, and the range stops before the representation does.
        case shortOfTotal
    }

    /// Whether `count` more body bytes stay inside the range, the file holding `fileLength`.
    public func admits(_ count: Int, fileLength: Int64) -> Bool {
        // Written so that no sum can overflow, whatever bounds a server sent.
        Int64(count) - 1 <= range.upperBound - fileLength
    }

    /// How the file stands once the body has ended, holding `fileLength` bytes.
    public func end(fileLength: Int64) -> End {
        if fileLength <= range.upperBound { return .shortOfRange }
        if let completeLength, range.upperBound < completeLength - 1 { return .shortOfTotal }
        return .complete
    }
}
