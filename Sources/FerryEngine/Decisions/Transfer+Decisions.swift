import Curl
import FerryCore
import FerryStore
import Foundation

/// Decision points of a transfer: where URLSession would call a delegate method with a
/// completion handler and wait for it.
extension Transfer {
    /// The decision a transfer is waiting for, with what it needs to act on the answer.
    enum PendingDecision {
        case redirect(RedirectPolicy.NextRequest)
        case challenge([AuthenticationChallenge], previousFailureCount: Int)
        /// A server asked for a client certificate; the transfer failed with this (-1206).
        case clientCertificate(TransferError)
        /// The session's proxy answered 407.
        case proxyChallenge([AuthenticationChallenge], previousFailureCount: Int)
        case response
        case delayedRequest
    }

    /// Raises a decision event. Returns true when the transfer now waits for the receiver; false
    /// when nobody subscribed and the caller goes on with the default at once.
    func ask(_ type: EventType, _ data: [String: JSONValue], pending: PendingDecision, proposed: TransferRequest? = nil) -> Bool {
        let subscribed = job.decisions.contains(type)
        let event = OwnerEvent(lease: lease, type: type, data: data, id: IDs.make("evt"))
        report(.decision(DecisionRequest(event: event, asksReceiver: subscribed, proposedRequest: proposed)))
        if subscribed {
            pendingDecision = pending
            pendingDecisionEventID = event.id
        }
        return subscribed
    }

    var isWaitingForDecision: Bool { pendingDecision != nil }

    /// `task.willBeginDelayedRequest`, for a task held back by `earliestBeginDate`, before its
    /// first request (once: not again after a suspend, a retry or a restart).
    func announceDelayedStart() {
        guard job.claim.earliestBeginDate != nil, !job.claim.isDelayedStartAnnounced, redirectCount == 0 else { return }
        _ = ask(.taskWillBeginDelayedRequest, ["request": (try? JSONValue(encoding: request)) ?? .null], pending: .delayedRequest, proposed: request)
    }

    /// Acts on the answer to the pending decision.
    func resolve(_ outcome: DecisionOutcome) -> DecisionStep {
        guard let pending = pendingDecision else { return .none }
        pendingDecision = nil
        pendingDecisionEventID = nil
        lastActivity = .now  // the wait for the receiver is not idleness of the connection
        switch (pending, outcome) {
        case (.redirect(let proposed), .redirect(let decision)):
            switch decision {
            case .stop?:
                return .end(stopAtRedirect())
            case .follow(let request)?:
                var changed = proposed
                changed.request = request
                return step(after: proceed(with: changed))
            case nil:
                return step(after: proceed(with: proposed))
            }
        case (.challenge(let challenges, let failures), .challenge(let decision)):
            switch decision {
            case .useCredential(let user, let password)?:
                return step(after: retry(with: (user, password, challenges.first?.scheme ?? .basic)))
            case .cancelAuthenticationChallenge?:
                return .end(.stopped(.cancel))
            case .rejectProtectionSpace?:
                return step(after: rejectProtectionSpace(of: challenges, previousFailureCount: failures))
            case .useClientCertificate?, .performDefaultHandling?, nil:
                return step(after: answerByDefault(challenges))
            }
        case (.proxyChallenge(let challenges, let failures), .challenge(let decision)):
            switch decision {
            case .useCredential(let user, let password)?:
                return step(after: retry(withProxyCredential: (user, password, challenges.first?.scheme ?? .basic)))
            case .cancelAuthenticationChallenge?:
                return .end(.stopped(.cancel))
            case .rejectProtectionSpace?:
                let rest = Array(challenges.dropFirst())
                return step(after: !rest.isEmpty && askProxyChallenge(rest, previousFailureCount: failures) ? nil : .finished)
            case .useClientCertificate?, .performDefaultHandling?, nil:
                // Session storage holds no proxy credentials: the 407 is the task's response.
                return .end(.finished)
            }
        case (.clientCertificate(let failure), .challenge(let decision)):
            switch decision {
            case .useClientCertificate(let certificate, let privateKey, let passphrase)?:
                let answer = DelegateClientCertificate(certificatePEM: certificate, privateKeyPEM: privateKey, passphrase: passphrase)
                return step(after: retry(withClientCertificate: answer))
            case .cancelAuthenticationChallenge?:
                return .end(.stopped(.cancel))
            case .useCredential?, .rejectProtectionSpace?, .performDefaultHandling?, nil:
                // Without a certificate the server refuses the connection, as it did.
                return .end(.failed(failure))
            }
        case (.response, .response(let decision)):
            switch decision {
            case .cancel?:
                return .end(.stopped(.cancel))
            case .becomeDownload?:
                do {
                    try becomeDownload()
                } catch {
                    return .end(.failed(TransferError(code: .cannotCreateFile, failingURL: request.url)))
                }
                return .resumeBody
            case .allow?, nil:
                return .resumeBody
            }
        case (.delayedRequest, .delayedRequest(let decision)):
            switch decision {
            case .cancel?:
                return .end(.stopped(.cancel))
            case .useNewRequest(let replacement)?:
                request = replacement
                currentRequestReported = false
                do { try configureExchange() } catch { return .end(.failed(TransferError(code: .unknown, failingURL: request.url))) }
                return step(after: nil)
            case .continueLoading?, nil:
                // A streamed upload may still wait for its body: then the worker adds it later.
                return step(after: nil)
            }
        default:
            return .none
        }
    }

    /// An exchange-level result as a step: nil means the next exchange is set up.
    private func step(after end: TransferEnd?) -> DecisionStep {
        if let end { return .end(end) }
        return isWaitingForBody || isWaitingForDecision ? .none : .startExchange
    }

    /// `completionHandler(nil)` for a redirect: the redirect response, with its body, is the task's.
    private func stopAtRedirect() -> TransferEnd {
        guard let head = heads.completed else { return .failed(TransferError(code: .badServerResponse, failingURL: request.url)) }
        let snapshot = HTTPResponseSnapshot(url: request.url, head: head)
        response = snapshot
        bytesExpectedToReceive = snapshot.expectedContentLength
        do {
            try redirectBody.withUnsafeBytes { bytes in
                if let file { try file.append(bytes) } else { body.append(contentsOf: bytes) }
            }
        } catch {
            return .failed(TransferError(code: .cannotWriteToFile, failingURL: request.url))
        }
        bytesReceived = Int64(redirectBody.count)
        return .finished
    }

    /// `.becomeDownload`: the body goes to a file from here on, and the task is a download task.
    private func becomeDownload() throws {
        guard let path = job.partialPath else { throw FileFailure(operation: "open", path: job.taskID, errno: 2) }
        let opened = try PartialFile(path: path, keeping: 0)
        try body.withUnsafeBytes { try opened.append($0) }
        body.removeAll()
        file = opened
        becameDownload = true
        emit(.dataTaskDidBecomeDownloadTask, ["downloadTask": ["id": .string(job.taskID), "kind": "download"]])
    }
}
