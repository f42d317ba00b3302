import FerryStore
import Synchronization

/// The transfers whose snapshot the heartbeat in progress took, until it is queued for writing.
///
/// A snapshot marks the data and progress it carries as reported (`dataReported`,
/// `writeDataReported`), and the transfer's end reports only what comes after. If the end reached the
/// ledger writer first, the heartbeat then found the task completed, its lease gone, and dropped
/// those events: a gap in the delegate's `dataTask.didReceiveData`. So an end waits, briefly,
/// until that beat is queued: every end while the beat collects its snapshots (a worker that
/// answered may have a transfer ending while another has not answered yet), then the ends of
/// the transfers it took, while it syncs their checkpoints.
final class BeatsInProgress: Sendable {
    private struct State {
        var isCollecting = false
        var leases: Set<LeaseToken> = []
        var waiting: [(lease: LeaseToken, continuation: CheckedContinuation<Void, Never>)] = []

        func holds(_ lease: LeaseToken) -> Bool { isCollecting || leases.contains(lease) }

        /// Takes out the waiters no longer held back.
        mutating func released() -> [CheckedContinuation<Void, Never>] {
            let (held, free) = (waiting.filter { holds($0.lease) }, waiting.filter { !holds($0.lease) })
            waiting = held
            return free.map(\.continuation)
        }
    }

    private let state = Mutex(State())

    /// The beat begins to collect snapshots: every end waits.
    func collecting() {
        state.withLock { $0.isCollecting = true }
    }

    /// The beat took the snapshots of these transfers: only their ends wait now.
    func took(_ leases: some Sequence<LeaseToken>) {
        let taken = Set(leases)
        let free = state.withLock { state in
            state.isCollecting = false
            state.leases = taken
            return state.released()
        }
        for continuation in free { continuation.resume() }
    }

    /// The beat is queued (or abandoned): no end waits. Idempotent.
    func end() {
        let free = state.withLock { state in
            state.isCollecting = false
            state.leases.removeAll()
            return state.released()
        }
        for continuation in free { continuation.resume() }
    }

    /// Returns once no beat in progress holds back the end of `lease`.
    func queued(_ lease: LeaseToken) async {
        await withCheckedContinuation { continuation in
            let waits = state.withLock { state in
                guard state.holds(lease) else { return false }
                state.waiting.append((lease, continuation))
                return true
            }
            if !waits { continuation.resume() }
        }
    }
}
