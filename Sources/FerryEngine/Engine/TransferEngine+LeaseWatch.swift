import FerryCore
import FerryStore

extension TransferEngine {
    /// Stops the transfers whose leases may lapse before a heartbeat renews them, while other
    /// instances are alive: the beats are failing (or stuck behind writes that cannot reach the
    /// database), and once a lease has lapsed another instance may take the task over and run
    /// it too, while its transfer here goes on. Each stops as on a lost lease: nothing is
    /// written, its partial file stays for whoever continues it, and once the lease has lapsed
    /// a reaper (this instance's too: `reapExpiredLeases(holding:)`) completes or releases the
    /// task as it would a crashed instance's.
    ///
    /// Alone (no other instance heartbeat within a lease at the last beat written), nobody can
    /// take a lease over: the transfers ride the outage out, and the first heartbeat after it
    /// renews their leases, lapsed or not. Stopping them would turn a database restart of more
    /// than twelve seconds into -1005 for every running task of a default session.
    ///
    /// A loop of its own rather than a step of the heartbeat: a beat queued behind a write that
    /// waits for the database does not come back to look.
    func runLeaseWatch() async {
        let margin = configuration.leaseDuration / 5
        let tick = min(configuration.heartbeatInterval, configuration.leaseDuration / 10)
        var warned = false
        while !Task.isCancelled {
            try? await Task.sleep(for: tick)
            guard othersMayTakeOver.load(ordering: .acquiring) else { continue }
            let cutoff = ContinuousClock.now - (configuration.leaseDuration - margin)
            let lapsing = book.withLock { $0.leases(lastHeldBefore: cutoff) }
            guard !lapsing.isEmpty else {
                warned = false
                continue
            }
            if !warned {
                logger.warning("heartbeats have not renewed this instance's leases; stopping their transfers before the leases lapse", metadata: [
                    "transfers": "\(lapsing.count)",
                ])
                warned = true
            }
            for lease in lapsing {
                stop(taskID: lease.taskID, lease: lease, .leaseLost)
            }
        }
    }
}
