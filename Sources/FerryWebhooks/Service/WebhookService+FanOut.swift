import FerryStore
import Foundation

extension WebhookService {
    /// How long the fan-out lets events gather after a pass that found some.
    static let fanOutCoalescing = Duration.milliseconds(20)

    /// Turns committed events into deliveries, in log order, up to the safe horizon.
    func runFanOut() async {
        var horizon = EventHorizon()
        while !shouldStop {
            var read = 0
            do {
                horizon = try await ledger.advance(horizon)
                while !shouldStop {
                    let result = try await ledger.fanOut(
                        upTo: horizon.safePosition, limit: configuration.fanOutBatchSize, decisionGrace: configuration.decisionGrace
                    )
                    guard result.didRun else { break }
                    read += result.eventsRead
                    if result.deliveriesCreated > 0 { deliveryBell.ring() }
                    if !result.sessionIDs.isEmpty {
                        try await ledger.finishEventsIfDone(sessionIDs: result.sessionIDs)
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
            if read > 0 { try? await Task.sleep(for: Self.fanOutCoalescing) }
            // A horizon that waits for open transactions is checked again very soon.
            await fanOutBell.wait(timeout: horizon.isWaiting ? .milliseconds(5) : configuration.idlePollInterval)
        }
    }
}
