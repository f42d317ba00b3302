import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// Takes the next deliveries of `previous`'s task stream, in order, for the request slot that
    /// sent `previous`, which was answered 2xx (its record may not be written yet): one indexed
    /// statement instead of a claim across every pending delivery, so that a busy stream goes on
    /// at the receiver's pace. Takes up to `limit` consecutive ones that are due and not leased,
    /// stopping at the first that is not. Nobody else can take them meanwhile: `claimDue` takes
    /// only the oldest unfinished delivery of a stream (here `previous`, or one before this run,
    /// until recorded), and these rows are locked before they are checked. Empty for a session's
    /// own stream (those also wait for the session's tasks: the claim's business).
    ///
    /// When the stream has nothing more (or has ended: nothing follows a task's
    /// `task.didCompleteWithError`), takes instead, in the same statement, the first of
    /// `candidates` (ready heads a claim left for want of room, oldest first) that is still due,
    /// not leased, the head of its stream (nothing earlier unfinished but what `answered` lists)
    /// and of an active endpoint, with the rest of its stream's run: the endpoint's count of
    /// streams in flight stays the same (one ends, one starts). Each candidate costs a look-up by
    /// key and one probe of the stream index, not a pass over every pending delivery. Also
    /// answers how many candidates it used up (taken, or found stale).
    ///
    /// The statement commits on its own: it checks and leases what it takes by itself, and a
    /// transaction's BEGIN and COMMIT were two of the five round trips a slot made per stream.
    public func claimNext(
        after previous: ClaimedDelivery, limit: Int, lease: Duration,
        orOneOf candidates: [DeliveryCandidate] = [], answered: [String] = []
    ) async throws -> (run: [ClaimedDelivery], candidatesUsed: Int) {
        guard previous.event.taskID != nil, limit > 0 else { return ([], 0) }
        // A task's last event is its didCompleteWithError: after it, there is nothing to look
        // for in its stream (a backlog's drain asked after every stream, for nothing).
        let streamEnded = previous.event.eventType == .taskDidCompleteWithError
        if streamEnded, candidates.isEmpty { return ([], 0) }
        // Planned once, by key (`NextInStreamPlanTests` checks those plans): planned for each
        // execution, a slot's statements spent a quarter to two fifths of their time planning
        // (bench/decisions.sh's delegate run).
        return try await pool.withConnection(commit: .asynchronous, plans: .byKeyPlannedOnce) { connection in
            guard !candidates.isEmpty else {
                let run = try takeRun(
                    endpointID: previous.endpointID, streamID: previous.streamID, after: previous.event.sequence,
                    limit: limit, lease: lease, on: connection
                )
                return (run, 0)
            }
            return try takeOneOf(
                candidates, after: streamEnded ? nil : previous, limit: limit, lease: lease, answered: answered, on: connection
            )
        }
    }

    /// Room on an endpoint, for `claimOneOf`.
    public enum Room: Sendable {
        /// A stream was taken: its run.
        case taken([ClaimedDelivery])
        /// The endpoint (or its tenant) is at its limit, or no longer active: nothing was taken.
        /// Decisions are sent whatever the limit, so one that ends may leave its endpoint full.
        case full
        /// None of the candidates is still good: nothing was taken.
        case noCandidate
    }

    /// Takes the first of `candidates` (all of one endpoint) that is still good, with the rest of
    /// its stream's run, as `claimNext` does when a stream runs out, but only while the endpoint
    /// and its tenant have fewer streams in flight than their limits (`perEndpoint` caps the
    /// endpoint's own `maximumInFlight`): for the room an answered decision freed, instead of a
    /// claim that ranks every pending delivery. Counting streams in flight reads the pending
    /// deliveries once (about 1 ms in bench/decisions.sh's data run); ranking them, five times
    /// as much. Also answers how many candidates were used up (taken, or found stale).
    ///
    /// One statement, the count and the switch (`switchIfRoomSQL`): they were two round trips,
    /// about 700 times per 1,000 tasks in bench/decisions.sh's data run.
    public func claimOneOf(
        _ candidates: [DeliveryCandidate], limit: Int, lease: Duration, answered: [String], perEndpoint: Int, perTenant: Int
    ) async throws -> (room: Room, candidatesUsed: Int) {
        guard let endpointID = candidates.first?.endpointID, limit > 0 else { return (.noCandidate, 0) }
        let parameters = switchParameters(candidates, limit: limit, lease: lease, answered: answered) + [endpointID, perEndpoint, perTenant]
        return try await pool.withConnection(commit: .asynchronous, plans: .byKeyPlannedOnce) { connection in
            // One row at least, which says whether there was room; the run's rows, if any.
            let rows = try connection.query(Self.switchIfRoomSQL, parameters)
            guard let first = rows.first, try first.decode("has_room", as: Bool.self) else { return (.full, 0) }
            guard try first.decode("delivery_id", as: String?.self) != nil else { return (.noCandidate, candidates.count) }
            return (.taken(try rows.map(ClaimedDelivery.decode)), Int(try first.decode("ordinal", as: Int64.self)))
        }
    }

    /// Leases the first of `candidates` that is still due, not leased, the head of its stream
    /// (nothing earlier unfinished but what `answered` lists) and of an active endpoint, with
    /// the rest of its stream's run (`takeRun`'s rules), in one statement; answers the run, loaded,
    /// and how many candidates were used up. Nothing (and every candidate used up) also when the
    /// one chosen was taken elsewhere meanwhile: the slot ends, and the next claim sees the rest.
    ///
    /// With `previous`, the run of `previous`'s stream comes first, in the same statement: only
    /// when it has none are the candidates looked at (none used up).
    ///
    /// One statement: the stream's look-up, the head and the head's run were three, each a round
    /// trip (in bench/decisions.sh's data run, 1,670 switches to another stream per 1,000 tasks,
    /// nearly all after a look-up of the stream that found nothing).
    private func takeOneOf(
        _ candidates: [DeliveryCandidate], after previous: ClaimedDelivery?, limit: Int, lease: Duration, answered: [String],
        on connection: PostgresConnection
    ) throws -> (run: [ClaimedDelivery], candidatesUsed: Int) {
        var parameters = switchParameters(candidates, limit: limit, lease: lease, answered: answered)
        if let previous { parameters += [previous.endpointID, previous.streamID, previous.event.sequence] }
        let rows = try connection.query(previous == nil ? Self.switchSQL : Self.switchAfterStreamSQL, parameters)
        guard let first = rows.first else { return ([], candidates.count) }
        // No ordinal: the run is the stream's own.
        return (try rows.map(ClaimedDelivery.decode), Int(try first.decode("ordinal", as: Int64?.self) ?? 0))
    }

    /// `switchSQL`'s first eight parameters.
    private func switchParameters(
        _ candidates: [DeliveryCandidate], limit: Int, lease: Duration, answered: [String]
    ) -> [any PostgresBindable] {
        [
            candidates.map(\.deliveryID), candidates.map(\.endpointID), candidates.map(\.streamID), candidates.map(\.sequence),
            answered, instanceID, lease.secondsValue, limit,
        ]
    }

    /// Leases up to `limit` consecutive deliveries of a stream after `sequence` that are due and
    /// not leased, stopping at the first that is not; answers them, loaded in the same statement.
    private func takeRun(
        endpointID: String, streamID: String, after sequence: Int64, limit: Int, lease: Duration, on connection: PostgresConnection
    ) throws -> [ClaimedDelivery] {
        try connection.query(
            Self.runSQL,
            [endpointID, streamID, sequence, instanceID, lease.secondsValue, limit]
        ).map(ClaimedDelivery.decode)
    }

    /// The most ready heads a claim hands back as candidates.
    public static let maximumCandidates = 512

    /// Gives back leases this instance took but will not use (the rest of a run after a failed
    /// attempt): they would otherwise count against their endpoint until they expire.
    public func releaseLeases(of deliveries: [ClaimedDelivery]) async throws {
        guard !deliveries.isEmpty else { return }
        try await pool.withConnection(commit: .asynchronous, plans: .byKeyPlannedOnce) { connection in
            _ = try connection.execute(
                """
                UPDATE webhook_deliveries d SET lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
                FROM unnest($1::text[], $2::int8[]) AS r(id, token)
                -- No "status = 'pending'": a finished delivery's lease is already given up (its
                -- owner is cleared), and the test would let the planner read a partial index
                -- of pending deliveries instead of the key.
                WHERE d.id = r.id AND d.lease_token = r.token AND d.lease_owner = $3
                """,
                [deliveries.map(\.deliveryID), deliveries.map(\.leaseToken), instanceID]
            )
        }
    }
}
