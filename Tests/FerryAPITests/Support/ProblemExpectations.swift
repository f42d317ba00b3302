import HTTPTypes
import Testing

/// Checks that `reply` is the problem+json a client can act on: the status, the media type, the
/// `X-Request-ID`, a `status` member that agrees, and — when a field is at fault — the `field`
/// member naming it and a `detail` that mentions it.
@discardableResult
func expectProblem(
    _ reply: Reply, status: HTTPResponse.Status, field: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ProblemReply? {
    #expect(reply.status == status, "\(reply)", sourceLocation: sourceLocation)
    #expect(reply.contentType == "application/problem+json", "\(reply)", sourceLocation: sourceLocation)
    #expect(reply.requestID?.isEmpty == false, "X-Request-ID is missing", sourceLocation: sourceLocation)
    guard let problem = reply.problem else {
        Issue.record("not a problem+json document: \(reply)", sourceLocation: sourceLocation)
        return nil
    }
    #expect(problem.status == Int(status.code), sourceLocation: sourceLocation)
    #expect(problem.type.hasPrefix("urn:ferry:problem:"), sourceLocation: sourceLocation)
    #expect(!problem.detail.isEmpty, sourceLocation: sourceLocation)
    if let field {
        #expect(problem.field == field, "detail: \(problem.detail)", sourceLocation: sourceLocation)
        #expect(problem.detail.contains(field), "detail does not name \(field): \(problem.detail)", sourceLocation: sourceLocation)
    }
    return problem
}

/// A client error rather than a server error, and in problem+json when it is an error at all.
func expectNoServerError(_ reply: Reply, _ what: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(reply.status.code < 500, "\(what()) → \(reply)", sourceLocation: sourceLocation)
    if reply.status.code >= 400 {
        #expect(reply.isProblem, "\(what()) → \(reply)", sourceLocation: sourceLocation)
    }
    #expect(reply.requestID != nil, "\(what()) → no X-Request-ID", sourceLocation: sourceLocation)
}
