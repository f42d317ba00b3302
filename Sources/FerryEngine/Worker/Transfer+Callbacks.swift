import Curl
import FerryCore
import Foundation

/// curl's callbacks, on the worker thread, inside `CurlMulti.perform()`.
extension Transfer {
    func curlEasy(_ easy: CurlEasy, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> Bool {
        lastActivity = .now
        switch heads.consume(line) {
        case .more:
            return true
        case .tooLarge:
            failure = TransferError(code: .cannotParseResponse, failingURL: request.url, reason: "the response head exceeds 256 KiB")
            return false
        case .malformed:
            failure = TransferError(code: .cannotParseResponse, failingURL: request.url)
            return false
        case .headComplete(let head):
            if awaitsTunnel, easy.httpConnectCode != 0 {
                // The proxy's answer to CONNECT (curl set its code from the status line): not the
                // origin's response. After a 2xx the tunnel is open and the origin's heads follow.
                tunnelHead = head
                awaitsTunnel = !(200...299).contains(head.statusCode)
                return true
            }
            // A reused connection's tunnel is open already: this head is the origin's.
            awaitsTunnel = false
            guard !head.isInterim else { return true }
            return receivedFinalHead(head)
        }
    }

    func curlEasy(_ easy: CurlEasy, didReceiveBody bytes: UnsafeRawBufferPointer) -> CurlBodyDisposition {
        lastActivity = .now
        if case .response? = pendingDecision { return .pause }  // the delegate has not decided yet
        guard case .final = role else {
            // A redirect's body is dropped, unless the delegate may stop at the redirect; and
            // read only so far: past the bound the exchange ends and the redirect goes on.
            droppedBodyBytes += bytes.count
            guard droppedBodyBytes <= Self.maximumDroppedBodyBytes else {
                isDroppedBodyCut = true
                return .abort
            }
            if case .redirect = role, job.decisions.contains(.taskWillPerformHTTPRedirection) {
                redirectBody.append(contentsOf: bytes)
            }
            return .consumed
        }
        // Subtracted, not added: no sum of counts may trap or wrap.
        if let limit = job.claim.maxTaskBytes, Int64(bytes.count) > limit - bytesReceived {
            failure = TransferError(
                code: .dataLengthExceedsMaximum, failingURL: request.url,
                reason: "the response exceeds the tenant's maxTaskBytes quota of \(limit) bytes"
            )
            return .abort
        }
        if let file {
            if let resumedRange, !resumedRange.admits(bytes.count, fileLength: file.bytesWritten) {
                // A chunked or close-delimited 206 runs past its Content-Range (one whose
                // Content-Length disagrees never got here): what follows the range is not known to
                // be the representation's next bytes, and which of the two lied cannot be told.
                // Refused as a 206 that does not fit is: the partial file is dropped, and the
                // exchange starts over without Range.
                restartsWithoutRange = true
                return .abort
            }
            guard hasRoomOnDisk() else { return .abort }
            do {
                try file.append(bytes)
            } catch {
                ranOutOfSpace = error.isOutOfSpace
                failure = TransferError(
                    code: .cannotWriteToFile, failingURL: request.url,
                    reason: error.isOutOfSpace ? "the server's disk is full" : "writing the download failed"
                )
                return .abort
            }
        } else {
            guard body.count + bytes.count <= job.maximumDataBytes else {
                failure = TransferError(
                    code: .dataLengthExceedsMaximum, failingURL: request.url,
                    reason: "a data task keeps at most \(job.maximumDataBytes) bytes; use a download task for larger bodies"
                )
                return .abort
            }
            guard holdsInMemory(bytes.count) else { return .abort }
            body.append(contentsOf: bytes)
        }
        bytesReceived += Int64(bytes.count)
        return .consumed
    }

    func curlEasy(_ easy: CurlEasy, readBodyInto buffer: UnsafeMutableRawBufferPointer) -> CurlReadResult {
        guard let uploadBody, sendsBody else { return .bytes(0) }
        if uploadBody.isStreamed {
            let result = uploadBody.readStream(into: buffer)
            switch result {
            case .pause: isReadPaused = true
            case .abort:
                failure = TransferError(
                    code: .requestBodyStreamExhausted, failingURL: request.url, reason: "the client stopped sending the streamed body"
                )
            case .bytes(let count) where count > 0: lastActivity = .now
            case .bytes: break
            }
            return result
        }
        guard let count = uploadBody.read(into: buffer) else {
            failure = TransferError(code: .requestBodyStreamExhausted, failingURL: request.url, reason: "reading the upload body failed")
            return .abort
        }
        return .bytes(count)
    }

    func curlEasy(_ easy: CurlEasy, seekBodyTo offset: Int64) -> Bool {
        uploadBody?.seek(to: offset) ?? (offset == 0)
    }

    func curlEasy(_ easy: CurlEasy, progress: CurlProgress) -> Bool {
        let sent = bodyBytesSent(curlCount: progress.uploaded)
        if sendsBody, sent != bytesSent {
            bytesSent = sent
            lastActivity = .now
            reportBodySent(force: false)
        }
        let idle = ContinuousClock.now - lastActivity
        let limit = Duration.milliseconds(Int64(job.requestTimeout * 1000))
        // Until the request goes out, curl's own connect timeout (as long, and started with the
        // same `lastActivity`) decides, and says whether the name lookup or the connect timed
        // out: what waitsForConnectivity waits out. Were it checked here too, this callback
        // would win the race and make it a plain -1001. A second more, should curl not fire.
        let isConnecting = idle >= limit && easy.timings.preTransfer == 0
        guard idle < limit || (isConnecting && idle < limit + .seconds(1)) else {
            failure = TransferError(
                code: .timedOut, failingURL: request.url,
                reason: "no data for \(FieldReader.format(job.requestTimeout)) s (timeoutIntervalForRequest)"
            )
            return false
        }
        return true
    }

    func curlEasy(_ easy: CurlEasy, mayConnectTo address: CurlSocketAddress) -> Bool {
        guard let networkAddress = NetworkAddress(bytes: address.addressBytes) else {
            refusal = AddressVerdict.nonIPRefusalReason
            return false
        }
        let verdict = job.addressPolicy.evaluate(networkAddress)
        if let reason = verdict.refusalReason {
            refusal = reason
            return false
        }
        return true
    }
}

extension Transfer {
    /// A download asks the disk again after this many bytes (a statvfs each time).
    static let spaceCheckInterval: Int64 = 1024 * 1024

    /// Whether the download may go on writing: false, with a -3003 failure, once the data
    /// folder's free space is down to the reserve.
    func hasRoomOnDisk() -> Bool {
        guard let disk = job.diskSpace, bytesReceived >= nextSpaceCheck else { return true }
        nextSpaceCheck = bytesReceived + Self.spaceCheckInterval
        guard disk.allows(writing: Self.spaceCheckInterval) else {
            ranOutOfSpace = true
            failure = TransferError(
                code: .cannotWriteToFile, failingURL: request.url,
                reason: "the server's disk is down to its free-space reserve; retry later"
            )
            return false
        }
        return true
    }
}

extension Transfer {
    /// Takes `count` more bytes of the process's memory budget for the body; false, with a
    /// -1103 failure, when the budget is spent. A body of announced length takes all of it at
    /// its first bytes: a task then either has room for its whole body or fails at once,
    /// rather than many tasks each holding part of the budget and all failing half-way.
    func holdsInMemory(_ count: Int) -> Bool {
        guard let budget = job.memory else { return true }
        let reservation = bodyReservation ?? MemoryBudget.Reservation(budget: budget, tenantID: job.claim.tenantID)
        bodyReservation = reservation
        let needed = body.count + count
        guard needed > reservation.heldBytes else { return true }
        let announced = bytesExpectedToReceive > 0 ? Int(clamping: min(bytesExpectedToReceive, Int64(job.maximumDataBytes))) : 0
        guard reservation.grow(by: max(needed, announced) - reservation.heldBytes) else {
            failure = budget.spent(failingURL: request.url)
            return false
        }
        // What is counted is what is allocated: no doubling growth past the announced length.
        if announced > body.capacity { body.reserveCapacity(announced) }
        return true
    }
}
