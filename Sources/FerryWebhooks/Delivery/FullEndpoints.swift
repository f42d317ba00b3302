import Synchronization

/// The endpoints whose ready deliveries the delivery loop's last claim left for want of room.
///
/// A claim reads and ranks every pending delivery: tens of milliseconds with hundreds pending.
/// New deliveries for endpoints it found full cannot change what the next claim takes; only room
/// freed there can. So the fan-out rings the delivery loop only for deliveries to other endpoints,
/// and room freed on this instance (a slot or a decision ending) rings it. Room freed by another
/// instance is seen by the loop's poll, as before. In bench/decisions.sh (1,000 data tasks, their
/// one endpoint kept full by decisions and slots) 105 of 177 claims took nothing.
final class FullEndpoints: Sendable {
    private let endpoints = Mutex<Set<String>>([])

    /// After a claim: the endpoints of the ready heads it left (none when it took as many as it
    /// could, since then the instance's own limit stopped it, not the endpoints').
    func claimed(leaving endpointIDs: some Sequence<String>) {
        let left = Set(endpointIDs)
        endpoints.withLock { $0 = left }
    }

    /// Whether new deliveries for these endpoints call for a claim: yes unless every one of them
    /// was full at the last claim and has freed no room here since.
    func callForClaim(newDeliveriesFor endpointIDs: Set<String>) -> Bool {
        endpoints.withLock { !$0.isSuperset(of: endpointIDs) }
    }

    /// Room freed here on `endpointID` (nil: anywhere, or unknown). Answers whether the delivery
    /// loop's next claim may take more than the last one did, and so should run.
    @discardableResult
    func roomFreed(on endpointID: String? = nil) -> Bool {
        endpoints.withLock { full in
            guard let endpointID else {
                full.removeAll()
                return true
            }
            guard full.contains(endpointID) else { return false }
            // Every endpoint's heads are ranked again by the claim that follows.
            full.removeAll()
            return true
        }
    }
}
