import Curl
import FerryCore
import Foundation

/// Deciding what a response is for, the moment its head is complete and before any body byte.
extension Transfer {
    func receivedFinalHead(_ head: ResponseHead) -> Bool {
        rememberCookies(of: head)
        if case .final = role {
            // curl went on after a response within one exchange (an authentication handshake):
            // the later response supersedes the earlier one, body included.
            do { try rewindExchange() } catch {
                failure = TransferError(code: .cannotWriteToFile, failingURL: request.url)
                return false
            }
        }
        if head.isRedirect, let location = head.value(of: "Location"), !location.isEmpty {
            guard let target = try? CurlURL(resolving: location, against: request.url),
                  target.scheme == "http" || target.scheme == "https"
            else {
                // URLSession delivers a redirect it cannot follow as the response itself.
                return acceptAsFinal(head)
            }
            role = .redirect(to: target.url)
            return true
        }
        return acceptAsFinal(head)
    }

    private func acceptAsFinal(_ head: ResponseHead) -> Bool {
        responseTime = Date()
        if head.statusCode == 304, redirectCount == 0, job.cache?.conditionalHeaders != nil {
            // The cached entry is still good: it is the response, the 304 only confirms it.
            notModified = true
            role = .discard
            return true
        }
        role = .final
        if sendsBody {
            bytesSent = bodyBytesSent(curlCount: max(bytesSent, easy.uploadedBytes))
            reportBodySent(force: true)
        }
        var snapshot = HTTPResponseSnapshot(url: request.url, head: head)
        let isGET = request.httpMethod.uppercased() == "GET"
        validator = ResumeDecision.isResumable(
            method: isGET ? "GET" : request.httpMethod,
            statusCode: head.statusCode,
            etag: head.value(of: "ETag"),
            lastModified: head.value(of: "Last-Modified"),
            acceptRanges: head.value(of: "Accept-Ranges")
        )
        // A request that names its own Range holds a slice of the resource, not its start: no
        // resume from it (resumed, it would ask from the slice's length and splice two parts).
        if resumeRequest == nil, sentHeaders.keys.contains(where: { $0.lowercased() == "range" }) { validator = nil }
        bytesExpectedToReceive = snapshot.expectedContentLength

        if let (offset, sentValidator) = resumeRequest {
            // `Transfer-Encoding` frames the body when both are sent (RFC 9112 §6.3), as curl reads it.
            let framedLength = head.value(of: "Transfer-Encoding") == nil && snapshot.expectedContentLength >= 0
                ? snapshot.expectedContentLength : nil
            let decision = ResumeDecision.decide(
                offset: offset, validator: sentValidator, expectedTotalBytes: expectedTotalBytes,
                statusCode: head.statusCode, contentRange: head.value(of: "Content-Range"), responseETag: head.value(of: "ETag"),
                contentLength: framedLength
            )
            switch decision {
            case .append where (file?.bytesWritten ?? offset) != offset:
                // The file does not hold what the Range asked to continue: never append there.
                restartsWithoutRange = true
                return false
            case .append:
                // The 206 need not repeat Last-Modified (RFC 9110 §15.3.7): the validator the
                // server matched in If-Range stays the partial file's, or a later failure would
                // drop the file and its resume data.
                validator = validator ?? sentValidator
                let contentRange = head.value(of: "Content-Range").flatMap(ContentRange.init)
                expectedTotalBytes = contentRange?.completeLength ?? expectedTotalBytes
                resumedRange = contentRange?.range.map { ResumedRange(range: $0, completeLength: expectedTotalBytes) }
                bytesExpectedToReceive = expectedTotalBytes ?? transferSizeUnknown
                // The task's response describes the whole representation, as URLSession's does.
                snapshot.statusCode = 200
                snapshot.expectedContentLength = bytesExpectedToReceive
                // Once: the rest asked for after a short range continues the same download.
                if !announcedResumeOffset {
                    emit(.downloadTaskDidResumeAtOffset, [
                        "fileOffset": .number(Double(offset)),
                        "expectedTotalBytes": .number(Double(bytesExpectedToReceive)),
                    ])
                    announcedResumeOffset = true
                }
            case .restartFromZero:
                guard restartFile() else { return false }
                expectedTotalBytes = snapshot.expectedContentLength >= 0 ? snapshot.expectedContentLength : nil
                emit(.downloadTaskDidResumeAtOffset, [
                    "fileOffset": 0,
                    "expectedTotalBytes": .number(Double(bytesExpectedToReceive)),
                ])
            case .alreadyComplete:
                fileWasAlreadyComplete = true
                snapshot.statusCode = 200
                snapshot.expectedContentLength = offset
                bytesExpectedToReceive = offset
                role = .discard  // the 416's own body is not part of the file
                response = snapshot
                resumeRequest = nil
                return true
            case .restartWithoutRange:
                restartsWithoutRange = true
                return false
            case .notResumed where rangeContinuations > 0:
                // The request for the rest after a short range (ours, not the task's) was answered
                // otherwise (a 503, a 429, an expired signature): the file holds what every range
                // brought, and the error page is not the download. -1005 with resume data, as a
                // cut connection ends, not a file emptied for the error's body.
                validator = sentValidator
                continuationRefusal = TransferError(
                    code: .networkConnectionLost, failingURL: request.url,
                    reason: "the request for the rest of the file was answered \(head.statusCode)"
                )
                return false
            case .notResumed:
                guard restartFile() else { return false }
            }
            resumeRequest = nil
        } else if job.claim.kind == .download {
            expectedTotalBytes = snapshot.expectedContentLength >= 0 ? snapshot.expectedContentLength : nil
            if announcedResumeOffset, head.statusCode == 200 {
                // The delegate heard that the download continued at an offset, and then its 206
                // was refused mid-body (it ran past its range) and it starts over without Range:
                // it hears so, as from a 200 to a resume.
                announcedResumeOffset = false
                emit(.downloadTaskDidResumeAtOffset, ["fileOffset": 0, "expectedTotalBytes": .number(Double(bytesExpectedToReceive))])
            }
        }
        response = snapshot
        // A challenged 401 (or the session's proxy's 407) goes to the challenge decision first
        // (URLSession asks about the response only when it is the task's final one).
        let isChallenge = head.statusCode == 401 && !head.values(of: "WWW-Authenticate").isEmpty
            || head.statusCode == 407 && usesProxy && !head.values(of: "Proxy-Authenticate").isEmpty
        holdsBackData = isChallenge
        if job.claim.kind != .download, !isChallenge {
            // Body bytes wait (the write callback pauses) until the delegate allows them.
            _ = ask(.dataTaskDidReceiveResponse, ["response": (try? JSONValue(encoding: snapshot)) ?? .null], pending: .response)
        }
        return true
    }

    /// Applies `Set-Cookie` to this transfer's view of the jar (the next hop sends them) and
    /// reports them for the session's jar.
    private func rememberCookies(of head: ResponseHead) {
        let fields = head.values(of: "Set-Cookie")
        let handling = CookieHandling(configuration: job.claim.configuration)
        guard !fields.isEmpty, handling.storesCookies else { return }
        let update = CookieUpdate(
            sessionID: job.claim.sessionID, setCookieFields: fields, requestURL: request.url,
            mainDocumentHost: CookieURL(string: job.claim.originalRequest.url)?.host, receivedAt: Date()
        )
        cookies.apply(update, handling: handling)
        report(.cookies(update, handling: handling, sessionKind: job.claim.configuration.kind))
    }

    /// Empties the partial file: what is on disk does not belong to this response. The exchange
    /// starts at 0 too: rewound (a challenge answered), it kept the resumed offset and wrote the
    /// next answer after the 401's body.
    private func restartFile() -> Bool {
        do {
            try file?.truncateToZero()
            bytesReceived = 0
            exchangeStartBytes = 0
            return true
        } catch {
            failure = TransferError(code: .cannotWriteToFile, failingURL: request.url)
            return false
        }
    }
}
