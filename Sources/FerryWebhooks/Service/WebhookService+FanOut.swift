import FerryStore
import Foundation

extension WebhookService {
    /// Turns committed events into deliveries, in log order, up to the safe horizon.
    func runFanOut() async {
        var horizon = EventHorizon()
        while !shouldStop {
            do {
                horizon = try await ledger.advance(horizon)
                while !shouldStop {
                    let result = try await ledger.fanOut(
                        upTo: horizon.safePosition, limit: configuration.fanOutBatchSize, decisionGrace: configuration.decisionGrace
                    )
                    guard result.didRun else { break }
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
            // A horizon that waits for open transactions is checked again very soon.
            await fanOutBell.wait(timeout: horizon.isWaiting ? .milliseconds(5) : configuration.idlePollInterval)
        }
    }
}
