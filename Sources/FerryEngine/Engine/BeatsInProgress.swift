import FerryStore
import Synchronization

/// The transfers whose snapshot the heartbeat in progress took, until it is queued for writing.
///
/// A snapshot marks the data and progress it carries as reported (`dataReported`,
/// `sendReported`), and the transfer's end reports only what comes after. If the end reached the
/// ledger writer first, the heartbeat then found the task completed, its lease gone, and dropped
/// those events: a gap in the delegate's `dataTask.didReceiveData`. So an end waits, briefly (the
/// beat's checkpoint fsyncs at most), until that beat is queued.
final class BeatsInProgress: Sendable {
    private struct State {
        var leases: Set<LeaseToken> = []
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func begin(_ leases: some Sequence<LeaseToken>) {
        let taken = Set(leases)
        state.withLock { $0.leases = taken }
    }

    /// The beat is queued (or abandoned): ends wait no more. Idempotent.
    func end() {
        let waiting = state.withLock { state in
            state.leases.removeAll()
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once no beat in progress holds a snapshot of `lease`.
    func queued(_ lease: LeaseToken) async {
        await withCheckedContinuation { continuation in
            let waits = state.withLock { state in
                guard state.leases.contains(lease) else { return false }
                state.waiting.append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
    }
}
