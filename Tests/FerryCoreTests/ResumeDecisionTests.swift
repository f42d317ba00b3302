import Testing

@testable import FerryCore

@Suite("ResumeDecision")
struct ResumeDecisionTests {
    private let etag = ResumeValidator.strongETag("\"v1\"")
    private let date = ResumeValidator.lastModified("Tue, 15 Nov 1994 08:12:31 GMT")

    private func decide(
        _ status: Int,
        _ contentRange: String?,
        offset: Int64 = 500,
        expected: Int64? = 1000,
        validator: ResumeValidator? = nil,
        responseETag: String? = nil,
        contentLength: Int64? = nil
    ) -> ResumeDecision {
        ResumeDecision.decide(
            offset: offset, validator: validator ?? etag, expectedTotalBytes: expected,
            statusCode: status, contentRange: contentRange, responseETag: responseETag, contentLength: contentLength
        )
    }

    @Test func partialContentAtTheOffsetAppends() {
        #expect(decide(206, "bytes 500-999/1000") == .append)
        #expect(decide(206, "bytes 500-999/1000", expected: nil) == .append)
        #expect(decide(206, "bytes 500-999/*") == .append)
        #expect(decide(206, "bytes 500-999/1000", validator: date) == .append)
        #expect(decide(206, "bytes 500-999/1000", responseETag: "\"v1\"") == .append)
        #expect(decide(206, "bytes 500-999/1000", validator: date, responseETag: "\"anything\"") == .append)
    }

    @Test func partialContentThatDoesNotFitRestartsWithoutRange() {
        #expect(decide(206, "bytes 0-999/1000") == .restartWithoutRange)
        #expect(decide(206, "bytes 501-999/1000") == .restartWithoutRange)
        #expect(decide(206, "bytes 500-1499/1500") == .restartWithoutRange)
        // Past the total the partial file knows, the response's own total unknown.
        #expect(decide(206, "bytes 500-1000/*") == .restartWithoutRange)
        #expect(decide(206, "bytes 500-9223372036854775807/*") == .restartWithoutRange)
        #expect(decide(206, nil) == .restartWithoutRange)
        #expect(decide(206, "bytes */1000") == .restartWithoutRange)
        #expect(decide(206, "garbage") == .restartWithoutRange)
        #expect(decide(206, "bytes 500-999/1000", responseETag: "\"v2\"") == .restartWithoutRange)
        #expect(decide(206, "bytes 500-999/1000", responseETag: "W/\"v1\"") == .restartWithoutRange)
    }

    @Test func partialContentWhoseLengthIsTheRangesAppends() {
        #expect(decide(206, "bytes 500-999/1000", contentLength: 500) == .append)
        #expect(decide(206, "bytes 500-599/*", contentLength: 100) == .append)
    }

    @Test func partialContentWhoseLengthIsNotTheRangesRestartsWithoutRange() {
        #expect(decide(206, "bytes 500-999/1000", contentLength: 499) == .restartWithoutRange)
        #expect(decide(206, "bytes 500-999/1000", contentLength: 501) == .restartWithoutRange)
        #expect(decide(206, "bytes 500-599/1000", contentLength: 500) == .restartWithoutRange)
        #expect(decide(206, "bytes 500-999/1000", contentLength: 0) == .restartWithoutRange)
    }

    @Test func partialContentOfATotalNobodyKnowsRestartsWithoutRange() {
        #expect(decide(206, "bytes 500-999/*", expected: nil) == .restartWithoutRange)
        #expect(decide(206, "bytes 500-999/*", expected: nil, contentLength: 500) == .restartWithoutRange)
    }

    @Test func okRestartsFromZero() {
        #expect(decide(200, nil) == .restartFromZero)
        #expect(decide(200, "bytes 500-999/1000") == .restartFromZero)
    }

    @Test func unsatisfiableAtTheFullLengthIsAlreadyComplete() {
        #expect(decide(416, "bytes */500", expected: nil) == .alreadyComplete)
        #expect(decide(416, "bytes */500", expected: 500) == .alreadyComplete)
    }

    @Test func otherUnsatisfiableResponsesRestartWithoutRange() {
        #expect(decide(416, "bytes */500", expected: 1000) == .restartWithoutRange)
        #expect(decide(416, "bytes */400", expected: nil) == .restartWithoutRange)
        #expect(decide(416, nil) == .restartWithoutRange)
        #expect(decide(416, "bytes 0-499/500") == .restartWithoutRange)
    }

    @Test(arguments: [304, 400, 401, 403, 404, 410, 500, 503, 204])
    func otherStatusesAreNotResumptions(status: Int) {
        #expect(decide(status, "bytes 500-999/1000") == .notResumed)
    }
}

@Suite("ResumeDecision.isResumable")
struct ResumeResumabilityTests {
    private func validator(
        method: String = "GET", status: Int = 200, etag: String? = nil, lastModified: String? = nil, acceptRanges: String? = nil
    ) -> ResumeValidator? {
        ResumeDecision.isResumable(method: method, statusCode: status, etag: etag, lastModified: lastModified, acceptRanges: acceptRanges)
    }

    private let lastModified = "Tue, 15 Nov 1994 08:12:31 GMT"

    @Test func prefersAStrongETag() {
        #expect(validator(etag: "\"abc\"") == .strongETag("\"abc\""))
        #expect(validator(status: 206, etag: "\"abc\"", lastModified: lastModified) == .strongETag("\"abc\""))
        #expect(validator(etag: " \"abc\" ", acceptRanges: "bytes") == .strongETag("\"abc\""))
        #expect(validator(etag: "\"\"") == .strongETag("\"\""))
    }

    @Test func neverUsesAWeakETag() {
        #expect(validator(etag: "W/\"abc\"") == nil)
        // With an entity tag, never a date (RFC 9110 §13.1.5), even when the tag is weak.
        #expect(validator(etag: "W/\"abc\"", lastModified: lastModified) == nil)
    }

    @Test func fallsBackToLastModified() {
        #expect(validator(lastModified: lastModified) == .lastModified(lastModified))
        #expect(validator(etag: "abc", lastModified: lastModified) == .lastModified(lastModified))
        #expect(validator(etag: "\"a b\"", lastModified: lastModified) == .lastModified(lastModified))
    }

    @Test func noValidatorMeansNotResumable() {
        #expect(validator() == nil)
        #expect(validator(etag: "unquoted") == nil)
        #expect(validator(etag: "", lastModified: "  ") == nil)
    }

    @Test func onlyGETAnsweredWith200Or206() {
        #expect(validator(method: "POST", etag: "\"abc\"") == nil)
        #expect(validator(method: "get", etag: "\"abc\"") == nil)
        #expect(validator(method: "HEAD", etag: "\"abc\"") == nil)
        #expect(validator(status: 404, etag: "\"abc\"") == nil)
        #expect(validator(status: 304, etag: "\"abc\"") == nil)
    }

    @Test func acceptRangesNoneMeansNotResumable() {
        #expect(validator(etag: "\"abc\"", acceptRanges: "none") == nil)
        #expect(validator(etag: "\"abc\"", acceptRanges: " None ") == nil)
        #expect(validator(etag: "\"abc\"", acceptRanges: "bytes") == .strongETag("\"abc\""))
    }

    @Test func ifRangeCarriesTheValidatorVerbatim() {
        #expect(ResumeValidator.strongETag("\"abc\"").ifRangeValue == "\"abc\"")
        #expect(ResumeValidator.lastModified(lastModified).ifRangeValue == lastModified)
    }
}
