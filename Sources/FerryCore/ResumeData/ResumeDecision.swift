/// What to do with the response to a resumed download (`Range: bytes=N-` + `If-Range`): the
/// decision table of SAFETY.md "Files", taken in the header callback before any body byte is
/// written.
public enum ResumeDecision: Equatable, Sendable {
    /// 206 starting exactly at N with a consistent total, a body as long as its range, and a
    /// total that someone knows: append to the partial file (`didResumeAtOffset` N).
    case append
    /// 200: the representation changed (or the origin ignores ranges) and this response is the
    /// whole body: truncate the partial file and write from 0 (`didResumeAtOffset` 0).
    case restartFromZero
    /// A partial or refused response that cannot be trusted (206 not starting at N, a changed
    /// total or entity tag, no usable `Content-Range`, a `Content-Length` other than the range's,
    /// no total known on either side, or a 416 that does not say the file is complete): discard
    /// this response and the partial file, and request again without `Range`.
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
    ///   - contentLength: the body's length as the response frames it (`Content-Length`, absent
    ///     when `Transfer-Encoding` frames the body instead), if it says.
    public static func decide(
        offset: Int64,
        validator: ResumeValidator,
        expectedTotalBytes: Int64?,
        statusCode: Int,
        contentRange: String?,
        responseETag: String? = nil,
        contentLength: Int64? = nil
    ) -> ResumeDecision {
        switch statusCode {
        case 200:
            return .restartFromZero
        case 206:
            guard let header = contentRange, let parsed = ContentRange(header), let range = parsed.range,
                  range.lowerBound == offset
            else { return .restartWithoutRange }
            // One of the two is wrong and nothing says which: a body longer than its range would
            // put other bytes after it in the file, and one shorter would stop short of a range
            // it claims to carry. The response is refused as one that does not start at N is.
            if let contentLength, contentLength != range.upperBound - range.lowerBound + 1 {
                return .restartWithoutRange
            }
            // Neither the partial file nor this response knows the total (`bytes N-M/*` resuming
            // a download whose first response had no length): a range that ends early cannot be
            // told from one that ends with the representation, and the file would be committed
            // short. Only a whole response says where the representation ends.
            if expectedTotalBytes == nil, parsed.completeLength == nil {
                return .restartWithoutRange
            }
            if let expectedTotalBytes, let total = parsed.completeLength, total != expectedTotalBytes {
                return .restartWithoutRange
            }
            // `bytes N-M/*` past the total the partial file knows: a larger representation, or a
            // wrong range. (A range within its own total is checked by `ContentRange`.)
            if let expectedTotalBytes, range.upperBound >= expectedTotalBytes {
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
