import Curl
import FerryCore
import Foundation

/// Deciding what a response is for, the moment its head is complete and before any body byte.
extension Transfer {
    func receivedFinalHead(_ head: ResponseHead) -> Bool {
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
        role = .final
        var snapshot = HTTPResponseSnapshot(url: request.url, head: head)
        let isGET = request.httpMethod.uppercased() == "GET"
        validator = ResumeDecision.isResumable(
            method: isGET ? "GET" : request.httpMethod,
            statusCode: head.statusCode,
            etag: head.value(of: "ETag"),
            lastModified: head.value(of: "Last-Modified"),
            acceptRanges: head.value(of: "Accept-Ranges")
        )
        bytesExpectedToReceive = snapshot.expectedContentLength

        if let (offset, sentValidator) = resumeRequest {
            let decision = ResumeDecision.decide(
                offset: offset, validator: sentValidator, expectedTotalBytes: expectedTotalBytes,
                statusCode: head.statusCode, contentRange: head.value(of: "Content-Range"), responseETag: head.value(of: "ETag")
            )
            switch decision {
            case .append:
                let total = head.value(of: "Content-Range").flatMap(ContentRange.init)?.completeLength
                expectedTotalBytes = total ?? expectedTotalBytes
                bytesExpectedToReceive = expectedTotalBytes ?? transferSizeUnknown
                // The task's response describes the whole representation, as URLSession's does.
                snapshot.statusCode = 200
                snapshot.expectedContentLength = bytesExpectedToReceive
                emit(.downloadTaskDidResumeAtOffset, [
                    "fileOffset": .number(Double(offset)),
                    "expectedTotalBytes": .number(Double(bytesExpectedToReceive)),
                ])
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
            case .notResumed:
                guard restartFile() else { return false }
            }
            resumeRequest = nil
        } else if job.claim.kind == .download {
            expectedTotalBytes = snapshot.expectedContentLength >= 0 ? snapshot.expectedContentLength : nil
        }
        response = snapshot
        if job.claim.kind != .download {
            emit(.dataTaskDidReceiveResponse, ["response": (try? JSONValue(encoding: snapshot)) ?? .null])
        }
        return true
    }

    /// Empties the partial file: what is on disk does not belong to this response.
    private func restartFile() -> Bool {
        do {
            try file?.truncateToZero()
            bytesReceived = 0
            return true
        } catch {
            failure = TransferError(code: .cannotWriteToFile, failingURL: request.url)
            return false
        }
    }
}
