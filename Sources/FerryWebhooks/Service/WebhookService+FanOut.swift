import FerryStore
import Foundation

extension WebhookService {
    /// How long the fan-out lets events gather after a pass that found some a delegate
    /// subscribes to.
    static let fanOutCoalescing = Duration.milliseconds(20)
    /// … and after one whose events nobody subscribes to (no delegate, or none for those types):
    /// a tenant without webhooks still writes an event notification with every transaction, and
    /// fanning those out every 20 ms was about 4 % of the CPU of a thousand small downloads.
    /// A subscribed event arriving meanwhile waits this long at most; a decision does not wait
    /// (`decide` delivers its task's earlier events itself).
    static let unsubscribedFanOutCoalescing = Duration.milliseconds(100)

    /// How often, and how long apart, the fan-out checks whether a new horizon is safe before it
    /// fans out to the last safe one.
    static let horizonPolls = 4
    static let horizonPollInterval = Duration.milliseconds(2)

    /// Turns committed events into deliveries, in log order, up to the safe horizon.
    func runFanOut() async {
        var horizon = EventHorizon()
        while !shouldStop {
            var read = 0, subscribed = 0
            do {
                horizon = try await ledger.advance(horizon)
                // A horizon just proposed waits for transactions that are mostly a few
                // milliseconds from their commit: waiting for them here, briefly, fans out the
                // events up to it now rather than a coalescing round later (webhooks.sh: a
                // median 190 ms from an event to its delivery's creation).
                for _ in 0..<Self.horizonPolls where horizon.isWaiting && !shouldStop {
                    try? await Task.sleep(for: Self.horizonPollInterval)
                    horizon = try await ledger.settle(horizon)
                }
                while !shouldStop {
                    let result = try await ledger.fanOut(
                        upTo: horizon.safePosition, limit: configuration.fanOutBatchSize, decisionGrace: configuration.decisionGrace
                    )
                    guard result.didRun else { break }
                    read += result.eventsRead
                    subscribed += result.eventsSubscribed
                    if result.deliveriesCreated > 0 { deliveriesMade(forEndpoints: result.endpointIDs) }
                    if !result.sessionIDs.isEmpty {
                        do {
                            try await ledger.finishEventsIfDone(sessionIDs: result.sessionIDs)
                        } catch {
                            // These events are fanned out already: the delivery loop checks again.
                            sessionsToCheckForFinishedEvents.withLock { $0.formUnion(result.sessionIDs) }
                            throw error
                        }
                    }
                    if result.eventsRead < configuration.fanOutBatchSize { break }
                }
            } catch {
                logger.error("webhook fan-out failed", metadata: ["error": "\(error)"])
                await fanOutBell.wait(timeout: .seconds(1))
                continue
            }
            // While events keep coming (a notification for every transaction that writes some),
            // those of the next few milliseconds are fanned out together: a pass costs several
            // statements whatever it reads.
            if read > 0 { await shutdownBell.wait(timeout: subscribed > 0 ? Self.fanOutCoalescing : Self.unsubscribedFanOutCoalescing) }
            // A horizon that waits for open transactions is checked again very soon.
            await fanOutBell.wait(timeout: horizon.isWaiting ? .milliseconds(5) : configuration.idlePollInterval)
        }
    }
}
