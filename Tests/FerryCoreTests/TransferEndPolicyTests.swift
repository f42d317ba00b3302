import FerryCore
import Foundation
import Testing

@Suite("What a transfer's end becomes")
struct TransferEndPolicyTests {
    let now = Date(timeIntervalSince1970: 1_000_000)
    var deadline: Date { now.addingTimeInterval(3600) }

    private func disposition(
        _ end: TransferEnd, kind: SessionKind, waits: Bool = false, attempt: Int = 1, announced: Bool = false, deadline: Date? = nil
    ) -> TransferDisposition {
        var random = SplitMix64(seed: 7)
        return TransferEndPolicy(sessionKind: kind, waitsForConnectivity: waits)
            .disposition(for: end, attempt: attempt, hasAnnouncedWaiting: announced, now: now, resourceDeadline: deadline ?? self.deadline, using: &random)
    }

    let lost = TransferError(code: .networkConnectionLost, failingURL: "http://x/")
    var unreachable: TransferError {
        var error = TransferError(code: .notConnectedToInternet, failingURL: "http://x/")
        error.isTransientConnectivityFailure = true
        return error
    }
    let connectionRefused = TransferError(code: .cannotConnectToHost, failingURL: "http://x/")
    let unknownHost = TransferError(code: .cannotFindHost, failingURL: "http://nowhere.invalid/")
    let refused = TransferError(code: .cannotConnectToHost, failingURL: "http://x/", reason: "refused by policy: 10.0.0.1 is private and not in FERRY_ALLOW_NETWORKS")
    let untrusted = TransferError(code: .serverCertificateUntrusted, failingURL: "https://x/")

    @Test("default sessions complete with the error and resume data")
    func defaultSession() {
        #expect(disposition(.failed(lost), kind: .default) == .complete(error: lost, attachesResumeData: true))
        #expect(disposition(.failed(lost), kind: .ephemeral) == .complete(error: lost, attachesResumeData: true))
        #expect(disposition(.shuttingDown, kind: .default) == .complete(error: nil, attachesResumeData: true))
    }

    @Test("a task claimed but not started at shutdown goes back, except an ephemeral session's")
    func unstartedAtShutdown() {
        for kind in [SessionKind.default, .background] {
            #expect(disposition(.handedBackUnstarted, kind: kind) == .release(notBefore: nil, isWaitingForConnectivity: false))
        }
        #expect(disposition(.handedBackUnstarted, kind: .ephemeral) == .complete(error: nil, attachesResumeData: true))
    }

    @Test("background sessions retry transient failures with backoff, within the deadline")
    func background() {
        guard case .release(let next?, false) = disposition(.failed(lost), kind: .background) else {
            Issue.record("expected a retry")
            return
        }
        #expect(next > now && next <= now.addingTimeInterval(2))
        #expect(disposition(.failed(lost), kind: .background, attempt: 10) == .complete(error: lost, attachesResumeData: true))
        #expect(disposition(.failed(lost), kind: .background, deadline: now) == .complete(error: lost, attachesResumeData: true))
        #expect(disposition(.failed(untrusted), kind: .background) == .complete(error: untrusted, attachesResumeData: true))
        #expect(disposition(.shuttingDown, kind: .background) == .release(notBefore: nil, isWaitingForConnectivity: false))
    }

    @Test("waitsForConnectivity waits out an unreachable origin, not a policy refusal")
    func waiting() {
        guard case .release(_, true) = disposition(.failed(unreachable), kind: .default, waits: true) else {
            Issue.record("expected waiting for connectivity")
            return
        }
        guard case .release(_, false) = disposition(.failed(unreachable), kind: .default, waits: true, attempt: 30, announced: true) else {
            Issue.record("expected to keep waiting past the attempt limit")
            return
        }
        // Announced once per task: at its first wait, even when earlier attempts failed otherwise.
        guard case .release(_, true) = disposition(.failed(unreachable), kind: .default, waits: true, attempt: 3) else {
            Issue.record("expected the first wait after other failures to be announced")
            return
        }
        // A background session waits (it always does) without the event, as URLSession's never calls it.
        for waits in [false, true] {
            guard case .release(_, false) = disposition(.failed(unreachable), kind: .background, waits: waits) else {
                Issue.record("expected a background session to wait without announcing it")
                return
            }
        }
        #expect(disposition(.failed(refused), kind: .background, waits: true) == .complete(error: refused, attachesResumeData: true))
        #expect(disposition(.failed(unreachable), kind: .default) == .complete(error: unreachable, attachesResumeData: true))
    }

    @Test("waitsForConnectivity does not wait out a refused connection or an unknown host: they fail at once")
    func definitiveFailures() {
        for error in [connectionRefused, unknownHost] {
            #expect(disposition(.failed(error), kind: .default, waits: true) == .complete(error: error, attachesResumeData: true))
        }
    }

    @Test("stops and lost leases")
    func stops() {
        #expect(disposition(.stopped(.suspend), kind: .default) == .release(notBefore: nil, isWaitingForConnectivity: false))
        #expect(disposition(.stopped(.cancel), kind: .background) == .complete(error: nil, attachesResumeData: false))
        #expect(disposition(.stopped(.cancelProducingResumeData), kind: .default) == .complete(error: nil, attachesResumeData: true))
        #expect(disposition(.leaseLost, kind: .background) == .abandon)
        #expect(disposition(.finished, kind: .background) == .complete(error: nil, attachesResumeData: false))
    }
}
