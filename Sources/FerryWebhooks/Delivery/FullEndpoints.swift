import Synchronization

/// The endpoints the delivery loop's last claim found full: more ready heads than room.
///
/// A claim reads and ranks every pending delivery: tens of milliseconds with hundreds pending.
/// New deliveries for endpoints it found full cannot change what the next claim takes; only room
/// freed there can. So the fan-out, and the owner's writes that make deliveries, ring the
/// delivery loop only for deliveries to other endpoints,
/// and room freed on this instance (a slot ending, or a decision's end that found room but no
/// waiting stream to take it) rings it and forgets which endpoints were full. Room freed
/// elsewhere (another instance's slots, leases that ran out) rings nothing here, so what a
/// claim found full is trusted only for `trustedFor`: past that, new
/// deliveries wake a claim again, and wait that long at most. In bench/decisions.sh (1,000
/// downloads, their one endpoint kept full by the instance's slots) 40 of 63 claims took nothing
/// before, woken by the fan-out.
final class FullEndpoints: Sendable {
    static let trustedFor = Duration.milliseconds(250)

    private struct State {
        var full: Set<String> = []
        var claimedAt = ContinuousClock.now
        /// Counts the times room was freed: a claim that ran meanwhile saw some of it taken.
        var roomFreed = 0
    }

    private let state = Mutex(State())

    /// Taken before a claim, handed back to `claimed(full:since:)`.
    var generation: Int { state.withLock { $0.roomFreed } }

    /// After a claim that began at `generation`: the endpoints it found full. Room freed while
    /// it ran (its ring is pending) may be on those endpoints, so then none counts as full.
    func claimed(full endpointIDs: Set<String>, since generation: Int) {
        state.withLock { state in
            state.full = state.roomFreed == generation ? endpointIDs : []
            state.claimedAt = .now
        }
    }

    /// Whether new deliveries for these endpoints call for a claim: yes unless every one of them
    /// was full at the last claim, less than `trustedFor` ago, and no room was freed here since.
    func callForClaim(newDeliveriesFor endpointIDs: Set<String>, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { !$0.full.isSuperset(of: endpointIDs) || now - $0.claimedAt >= Self.trustedFor }
    }

    /// Room freed here (a slot ended, or a decision found room but no taker), or perhaps anywhere
    /// (the notifications were interrupted): the next claim ranks every endpoint again.
    func roomFreed() {
        state.withLock { state in
            state.full.removeAll()
            state.roomFreed &+= 1
        }
    }
}
