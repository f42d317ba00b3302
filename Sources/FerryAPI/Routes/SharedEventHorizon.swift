import FerryStore

/// One event horizon for all of the instance's event streams. Advancing it costs two or three
/// queries; when one notification woke a hundred streams, each advanced its own, and while a
/// transaction held the horizon back every stream did so every 5 ms. Now a stream asks for a
/// horizon computed after it woke; one round runs at a time, and every stream that asks while
/// a round is under way shares it or the next one.
actor SharedEventHorizon {
    private let events: EventLogStore
    private let reads: ReadCounter
    /// The newest horizon, and when the round that made it started.
    private var latest: (started: ContinuousClock.Instant, horizon: EventHorizon)?
    private var inFlight: (started: ContinuousClock.Instant, round: Task<EventHorizon, any Error>)?

    init(events: EventLogStore, reads: ReadCounter) {
        self.events = events
        self.reads = reads
    }

    /// A horizon whose round started at `instant` or later: it covers every event committed
    /// before `instant` (such as the one whose notification woke the caller), or says
    /// `isWaiting` for transactions still open.
    func horizon(startedAfter instant: ContinuousClock.Instant) async throws -> EventHorizon {
        while true {
            if let latest, latest.started >= instant { return latest.horizon }
            if let inFlight {
                // Too old for the caller, or fresh enough: either way wait for it; an old one is
                // followed by the next round, which the caller then shares.
                let result = await inFlight.round.result
                if inFlight.started >= instant { return try result.get() }
                continue
            }
            let started = ContinuousClock.now
            let base = latest?.horizon ?? EventHorizon()
            let (events, reads) = (self.events, self.reads)
            // Awaited by every stream that shares it; it ends with its queries, and records its
            // result before anyone sees it finish.
            let round = Task {
                reads.add()
                let outcome: Result<EventHorizon, any Error>
                do { outcome = .success(try await events.advance(base)) } catch { outcome = .failure(error) }
                self.finish(started: started, outcome)  // the round runs on the actor (it captures self)
                return try outcome.get()
            }
            inFlight = (started, round)
            return try await round.value
        }
    }

    private func finish(started: ContinuousClock.Instant, _ outcome: Result<EventHorizon, any Error>) {
        inFlight = nil
        if case .success(let horizon) = outcome { latest = (started, horizon) }
    }
}
