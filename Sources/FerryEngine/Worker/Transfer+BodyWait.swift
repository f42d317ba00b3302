import FerryCore
import Foundation

/// A streamed upload waiting for its client's body is not in curl (the body has not started) or
/// is paused there (no bytes yet), so curl's own timeouts never see it: the worker checks
/// `timeoutIntervalForRequest` and `timeoutIntervalForResource` for it with these.
extension Transfer {
    /// Whether the transfer waits for bytes the client has not sent.
    var isWaitingForClient: Bool {
        (isWaitingForBody || isReadPaused) && !isWaitingForDecision
    }

    /// When the wait becomes a `timeoutIntervalForRequest` failure: that long after bytes last
    /// moved, or after the body was asked for.
    var bodyWaitDeadline: ContinuousClock.Instant {
        lastActivity + .milliseconds(Int64(job.requestTimeout * 1000))
    }

    /// The -1001 that ends the wait at `now`, if it is over.
    func bodyWaitTimeout(at now: ContinuousClock.Instant) -> TransferError? {
        if job.claim.resourceDeadline.timeIntervalSinceNow <= 0 {
            return TransferError(code: .timedOut, failingURL: request.url, reason: "timeoutIntervalForResource elapsed")
        }
        guard now >= bodyWaitDeadline else { return nil }
        return TransferError(
            code: .timedOut, failingURL: request.url,
            reason: "no body from the client for \(FieldReader.format(job.requestTimeout)) s (timeoutIntervalForRequest)"
        )
    }
}
