import Foundation

/// How a transfer ended, as its owner saw it.
public enum TransferEnd: Sendable, Equatable {
    /// A final response arrived and its body was received completely.
    case finished
    /// A transport, TLS, file or policy failure.
    case failed(TransferError)
    /// The tenant asked the transfer to stop.
    case stopped(TaskLifecycle.StopReason)
    /// This instance is shutting down.
    case shuttingDown
    /// Claimed but not started when this instance began shutting down (waiting for a
    /// connection slot, or for its files): nothing was sent, so it goes back for another
    /// instance or the next start, in a default session as in a background one. An ephemeral
    /// session lives in this process only: its task ends as a running one does.
    case handedBackUnstarted
    /// The lease was taken over: this owner must write nothing more.
    case leaseLost
    /// The partial file (or, on this instance, the task itself) is still held by a previous
    /// owner that has not yet noticed it lost its lease: try again in a moment.
    case fileBusy
}

/// What the owner records for an ending.
public enum TransferDisposition: Sendable, Equatable {
    /// Complete the task. `keepsPartialFile`: a partial download stays for its resume data.
    case complete(error: TransferError?, attachesResumeData: Bool)
    /// Back to waiting for a claim, not before `notBefore`; `isWaitingForConnectivity` marks the
    /// task's first wait for an unreachable origin under `waitsForConnectivity` (the
    /// `task.isWaitingForConnectivity` event, sent once per task and never for a background
    /// session, as URLSession's delegate method is called).
    case release(notBefore: Date?, isWaitingForConnectivity: Bool)
    /// Write nothing: someone else owns the task now.
    case abandon
}

/// URLSession's rules for ending a transfer: background sessions retry transport failures by
/// themselves and survive shutdowns; default and ephemeral sessions complete with the error
/// (carrying resume data for downloads). `waitsForConnectivity` keeps waiting, within
/// `timeoutIntervalForResource`, while the network plausibly keeps the origin out of reach.
public struct TransferEndPolicy: Sendable {
    public var sessionKind: SessionKind
    public var waitsForConnectivity: Bool
    public var retry: TransferRetryPolicy

    public init(sessionKind: SessionKind, waitsForConnectivity: Bool, retry: TransferRetryPolicy = TransferRetryPolicy()) {
        self.sessionKind = sessionKind
        self.waitsForConnectivity = waitsForConnectivity
        self.retry = retry
    }

    /// - Parameters:
    ///   - attempt: 1 for the first attempt of the task.
    ///   - hasAnnouncedWaiting: whether an earlier attempt already sent `task.isWaitingForConnectivity`.
    public func disposition(
        for end: TransferEnd, attempt: Int, hasAnnouncedWaiting: Bool, now: Date, resourceDeadline: Date,
        using generator: inout some RandomNumberGenerator
    ) -> TransferDisposition {
        switch end {
        case .finished:
            return .complete(error: nil, attachesResumeData: false)
        case .leaseLost:
            return .abandon
        case .fileBusy:
            return .release(notBefore: now.addingTimeInterval(2), isWaitingForConnectivity: false)
        case .stopped(.suspend):
            return .release(notBefore: nil, isWaitingForConnectivity: false)
        case .stopped(.cancel):
            return .complete(error: nil, attachesResumeData: false)
        case .stopped(.cancelProducingResumeData):
            return .complete(error: nil, attachesResumeData: true)
        case .shuttingDown:
            if sessionKind == .background { return .release(notBefore: nil, isWaitingForConnectivity: false) }
            return .complete(error: nil, attachesResumeData: true)
        case .handedBackUnstarted:
            if sessionKind != .ephemeral { return .release(notBefore: nil, isWaitingForConnectivity: false) }
            return .complete(error: nil, attachesResumeData: true)
        case .failed(let error):
            let unreachable = Self.isUnreachable(error)
            if unreachable, waitsForConnectivity || sessionKind == .background {
                // Waiting for connectivity is bounded by the resource deadline, not by a count.
                let unbounded = TransferRetryPolicy(
                    baseDelay: retry.baseDelay, multiplier: retry.multiplier, maximumDelay: retry.maximumDelay, maximumAttempts: .max
                )
                if let next = unbounded.nextAttempt(afterFailure: attempt, now: now, resourceDeadline: resourceDeadline, using: &generator) {
                    // A background session waits without telling: it ignores waitsForConnectivity.
                    let announces = waitsForConnectivity && sessionKind != .background && !hasAnnouncedWaiting
                    return .release(notBefore: next, isWaitingForConnectivity: announces)
                }
            } else if sessionKind == .background, Self.isTransient(error),
                      let next = retry.nextAttempt(afterFailure: attempt, now: now, resourceDeadline: resourceDeadline, using: &generator)
            {
                return .release(notBefore: next, isWaitingForConnectivity: false)
            }
            return .complete(error: error, attachesResumeData: true)
        }
    }

    /// The network, not the origin, is plausibly in the way (an unreachable network or host, a
    /// connect or DNS lookup that timed out): what `waitsForConnectivity` waits out. A refused
    /// connection or an unknown host is the origin's answer and fails at once with its own code;
    /// a refusal by Ferry's own address policy is not a connectivity problem either.
    static func isUnreachable(_ error: TransferError) -> Bool {
        !error.isPolicyRefusal && error.isTransientConnectivityFailure
    }

    /// Failures a later attempt may not meet again.
    static func isTransient(_ error: TransferError) -> Bool {
        guard !error.isPolicyRefusal, !error.isFinal else { return false }
        return [
            URLErrorCode.timedOut, .cannotFindHost, .cannotConnectToHost, .networkConnectionLost, .dnsLookupFailed,
            .notConnectedToInternet, .badServerResponse, .cannotParseResponse, .secureConnectionFailed,
        ].contains(error.urlErrorCode)
    }
}
