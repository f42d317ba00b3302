import Curl
import FerryCore
import FerryStore

/// A decision event a transfer raised: the receiver is asked when the task's delegate
/// subscribes to it, else URLSession's default applies at once (and the log says so).
struct DecisionRequest: Sendable {
    var event: OwnerEvent
    var asksReceiver: Bool
    /// What a reply may change: the proposed redirect request, or the delayed request.
    var proposedRequest: TransferRequest?
    /// When the transfer stopped to wait for the decision.
    var pausedAt = ContinuousClock.now
}

/// The receiver's decision, read for the transfer (nil members: the default).
enum DecisionOutcome: Sendable {
    case redirect(DecisionReplies.Redirect?)
    case challenge(DecisionReplies.Challenge?)
    case response(DecisionReplies.Response?)
    case delayedRequest(DecisionReplies.DelayedRequest?)

    /// Reads `reply` as the answer to `request`'s event.
    init?(reply: JSONValue?, to request: DecisionRequest) {
        let proposed = request.proposedRequest ?? TransferRequest(url: "")
        switch request.event.type {
        case .taskWillPerformHTTPRedirection:
            self = .redirect(DecisionReplies.redirect(reply, proposed: proposed, urlChecker: DecisionURLChecker()))
        case .taskDidReceiveChallenge, .sessionDidReceiveChallenge:
            self = .challenge(DecisionReplies.challenge(reply))
        case .dataTaskDidReceiveResponse:
            self = .response(DecisionReplies.response(reply))
        case .taskWillBeginDelayedRequest:
            self = .delayedRequest(DecisionReplies.delayedRequest(reply, original: proposed, urlChecker: DecisionURLChecker()))
        default:
            return nil
        }
    }
}

/// What a transfer does once a decision is in.
enum DecisionStep {
    /// Nothing changes for curl (the transfer was not waiting).
    case none
    /// Let the paused body flow again.
    case resumeBody
    /// Start the next exchange (add the handle to the multi).
    case startExchange
    /// The transfer is over.
    case end(TransferEnd)
}

/// URLs in receivers' replies pass curl's parser, as URLs from the API do.
struct DecisionURLChecker: URLSyntaxChecker {
    func check(_ text: String, field: String) throws -> CheckedURL {
        do {
            let url = try CurlURL(httpURL: text, maximumLength: Self.maximumURLLength)
            return CheckedURL(url: url.url, scheme: url.scheme, host: url.host)
        } catch {
            throw ValidationError(field: field, message: "is not an absolute http or https URL.")
        }
    }
}
