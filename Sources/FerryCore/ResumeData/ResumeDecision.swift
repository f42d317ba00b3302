/// What to do with the response to a resumed download (`Range: bytes=N-` + `If-Range`): the
/// decision table of SAFETY.md "Files", taken in the header callback before any body byte is
/// written.
public enum ResumeDecision: Equatable, Sendable {
    /// 206 starting exactly at N with a consistent total: append to the partial file
    /// (`didResumeAtOffset` N).
    case append
    /// 200: the representation changed (or the origin ignores ranges) and this response is the
    /// whole body: truncate the partial file and write from 0 (`didResumeAtOffset` 0).
    case restartFromZero
    /// A partial or refused response that cannot be trusted (206 not starting at N, a changed
    /// total or entity tag, no usable `Content-Range`, or a 416 that does not say the file is
    /// complete): discard this response and the partial file, and request again without `Range`.
    case restartWithoutRange
    /// 416 with `bytes */N`, N being what is on disk: the file is already complete.
    case alreadyComplete
    /// Any other status (4xx, 5xx, …): not a resumption; handle it as an ordinary response.
    case notResumed

    /// Decides for the response to a request sent with `Range: bytes=<offset>-` and
    /// `If-Range: <validator>`.
    ///
    /// - Parameters:
    ///   - offset: N, the bytes on disk that were asked to be skipped.
    ///   - validator: the validator sent in `If-Range`.
    ///   - expectedTotalBytes: the full length recorded with the partial file, when known.
    ///   - statusCode: the response status.
    ///   - contentRange: the response's `Content-Range` header, if any.
    ///   - responseETag: the response's `ETag`, if any: a 206 under another strong tag than the
    ///     one sent belongs to another representation.
    public static func decide(
        offset: Int64,
        validator: ResumeValidator,
        expectedTotalBytes: Int64?,
        statusCode: Int,
        contentRange: String?,
        responseETag: String? = nil
    ) -> ResumeDecision {
        switch statusCode {
        case 200:
            return .restartFromZero
        case 206:
            guard let header = contentRange, let parsed = ContentRange(header), let range = parsed.range,
                  range.lowerBound == offset
            else { return .restartWithoutRange }
            if let expectedTotalBytes, let total = parsed.completeLength, total != expectedTotalBytes {
                return .restartWithoutRange
            }
            if case .strongETag(let sent) = validator, let received = responseETag?.trimmingASCIISpaces(),
               !received.isEmpty, received != sent {
                return .restartWithoutRange
            }
            return .append
        case 416:
            guard let header = contentRange, let parsed = ContentRange(header), parsed.range == nil,
                  parsed.completeLength == offset,
                  expectedTotalBytes == nil || expectedTotalBytes == offset
            else { return .restartWithoutRange }
            return .alreadyComplete
        default:
            return .notResumed
        }
    }
}
