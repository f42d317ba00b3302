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
    /// `task.didCompleteWithError`), takes instead, on the same connection, the first of
    /// `candidates` (ready heads a claim left for want of room, oldest first) that is still due,
    /// not leased, the head of its stream (nothing earlier unfinished but what `answered` lists)
    /// and of an active endpoint, with the rest of its stream's run: the endpoint's count of
    /// streams in flight stays the same (one ends, one starts). Each candidate costs a look-up by
    /// key and one probe of the stream index, not a pass over every pending delivery. Also
    /// answers how many candidates it used up (taken, or found stale).
    ///
    /// Each statement commits on its own: each checks and leases what it takes by itself, so
    /// nothing needs them together, and a transaction's BEGIN and COMMIT were two of the five
    /// round trips a slot made per stream. (A head leased by a statement whose run then fails
    /// to be taken is given back by its lease's end, as after a crash.)
    public func claimNext(
        after previous: ClaimedDelivery, limit: Int, lease: Duration,
        orOneOf candidates: [DeliveryCandidate] = [], answered: [String] = []
    ) async throws -> (run: [ClaimedDelivery], candidatesUsed: Int) {
        guard previous.event.taskID != nil, limit > 0 else { return ([], 0) }
        // A task's last event is its didCompleteWithError: after it, there is nothing to look
        // for in its stream (a backlog's drain asked after every stream, for nothing).
        let streamEnded = previous.event.eventType == .taskDidCompleteWithError
        if streamEnded, candidates.isEmpty { return ([], 0) }
        return try await pool.withConnection(commit: .asynchronous) { connection in
            if !streamEnded {
                let run = try takeRun(
                    endpointID: previous.endpointID, streamID: previous.streamID, after: previous.event.sequence,
                    limit: limit, lease: lease, on: connection
                )
                guard run.isEmpty else { return (run, 0) }
            }
            return try takeOneOf(candidates, limit: limit, lease: lease, answered: answered, on: connection)
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
    public func claimOneOf(
        _ candidates: [DeliveryCandidate], limit: Int, lease: Duration, answered: [String], perEndpoint: Int, perTenant: Int
    ) async throws -> (room: Room, candidatesUsed: Int) {
        guard let endpointID = candidates.first?.endpointID, limit > 0 else { return (.noCandidate, 0) }
        return try await pool.withConnection(commit: .asynchronous) { connection in
            let hasRoom = try connection.query(
                Self.roomSQL, [endpointID, answered, perEndpoint, perTenant]
            ).first?.decode(0, as: Bool.self) ?? false
            guard hasRoom else { return (.full, 0) }
            let (run, used) = try takeOneOf(candidates, limit: limit, lease: lease, answered: answered, on: connection)
            return (run.isEmpty ? .noCandidate : .taken(run), used)
        }
    }

    /// `claimOneOf`'s check ($1 endpoint, $2 answered, $3 the cap on endpoints' limits, $4 the
    /// tenant limit): whether the endpoint is active and it and its tenant have room for one
    /// more stream, counted as `claimDue` counts them (leased pending deliveries, by stream).
    static let roomSQL = """
        WITH busy AS MATERIALIZED (
            -- Made once and read twice, so the tenant's test cannot be pushed into it: there it
            -- could read every delivery the tenant ever had, by webhook_deliveries_tenant.
            \(streamsInFlightSQL(answered: "$2"))
        )
        SELECT w.status = 'active'
           AND (SELECT count(*) FROM busy WHERE busy.endpoint_id = w.id) < least(w.maximum_in_flight, $3)
           AND (SELECT count(*) FROM busy WHERE busy.tenant_id = w.tenant_id) < $4
        FROM webhook_endpoints w WHERE w.id = $1
        """

    /// The first good candidate's run (see `takeHead`), and how many candidates were used up.
    private func takeOneOf(
        _ candidates: [DeliveryCandidate], limit: Int, lease: Duration, answered: [String], on connection: PostgresConnection
    ) throws -> (run: [ClaimedDelivery], candidatesUsed: Int) {
        guard let index = try takeHead(of: candidates, answered: answered, lease: lease, on: connection) else {
            return ([], candidates.count)
        }
        let candidate = candidates[index]
        let run = try takeRun(
            endpointID: candidate.endpointID, streamID: candidate.streamID, after: candidate.sequence,
            limit: limit - 1, lease: lease, including: candidate.deliveryID, on: connection
        )
        return (run, index + 1)
    }

    /// `takeRun`'s statement ($1 endpoint, $2 stream, $3 after this sequence, $4 instance, $5
    /// lease seconds, $6 limit, $7 a head leased before, loaded first). Its plans must read the
    /// stream index by all three columns whatever the statistics say (`NextInStreamPlanTests`).
    static let runSQL = """
        WITH following AS (
            SELECT n.id, n.sequence,
                   n.next_attempt_at <= now() AND (n.lease_expires_at IS NULL OR n.lease_expires_at < now()) AS takeable
            FROM webhook_deliveries n
            WHERE n.endpoint_id = $1 AND n.stream_id = $2 AND n.status = 'pending' AND n.sequence > $3
            ORDER BY n.sequence LIMIT $6
            FOR NO KEY UPDATE
        ), run AS (
            SELECT id FROM following
            WHERE sequence < coalesce((SELECT min(sequence) FROM following WHERE NOT takeable), 9223372036854775807)
        ), leased AS (
            UPDATE webhook_deliveries d SET lease_owner = $4, lease_token = \(Self.nextLeaseToken(after: "d.lease_token")),
                lease_expires_at = now() + make_interval(secs => $5), updated_at = now()
            FROM run
            WHERE d.id = run.id
              AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.status = 'active')
            RETURNING d.*
        )
        SELECT \(ClaimedDelivery.columns)
        FROM (SELECT * FROM leased UNION ALL SELECT * FROM webhook_deliveries WHERE id = $7) d
        JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
        ORDER BY e.position
        """

    /// `takeHead`'s statement ($1 candidates, $2 their endpoints, $3 their streams, $4 their
    /// sequences, $5 answered, $6 instance, $7 lease seconds). Its plans must look the
    /// candidates up by their keys (`NextInStreamPlanTests`).
    static let headSQL = """
        WITH offered AS (
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[]) WITH ORDINALITY
                AS c(id, endpoint_id, stream_id, sequence, ordinal)
        ), first AS (
            -- The first that looks good, each looked up by its key and its stream probed by
            -- the stream index (OFFSET 0 keeps each apart: as joins, the planner read every
            -- pending delivery instead). Nothing is locked yet: only the one chosen is.
            SELECT c.id, c.ordinal FROM offered c
            CROSS JOIN LATERAL (
                SELECT d.status, d.next_attempt_at, d.lease_expires_at, d.endpoint_id FROM webhook_deliveries d
                WHERE d.id = c.id OFFSET 0
            ) d
            CROSS JOIN LATERAL (
                SELECT EXISTS (
                    SELECT 1 FROM webhook_deliveries q
                    WHERE q.endpoint_id = c.endpoint_id AND q.stream_id = c.stream_id AND q.status = 'pending'
                      AND q.sequence < c.sequence AND q.id <> ALL($5::text[])
                ) AS behind OFFSET 0
            ) earlier
            WHERE d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())
              AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.status = 'active')
              AND NOT earlier.behind
            ORDER BY c.ordinal LIMIT 1
        ), locked AS (
            -- By its key alone, then checked again as locked (its latest version): with
            -- "status = 'pending'" here, the planner may read a whole partial index of pending
            -- deliveries instead (see 0014_no_index_of_due_deliveries.sql).
            SELECT d.id, d.status, d.lease_expires_at FROM webhook_deliveries d
            WHERE d.id = (SELECT id FROM first)
            FOR NO KEY UPDATE SKIP LOCKED
        ), head AS (
            SELECT l.id FROM locked l
            WHERE l.status = 'pending' AND (l.lease_expires_at IS NULL OR l.lease_expires_at < now())
        )
        UPDATE webhook_deliveries d SET lease_owner = $6, lease_token = \(Self.nextLeaseToken(after: "d.lease_token")),
            lease_expires_at = now() + make_interval(secs => $7), updated_at = now()
        FROM head WHERE d.id = head.id
        RETURNING (SELECT ordinal FROM first)
        """

    /// Leases up to `limit` consecutive deliveries of a stream after `sequence` that are due and
    /// not leased, stopping at the first that is not; answers them (with `head`, leased just
    /// before by this instance, first), loaded in the same statement.
    private func takeRun(
        endpointID: String, streamID: String, after sequence: Int64, limit: Int, lease: Duration,
        including head: String? = nil, on connection: PostgresConnection
    ) throws -> [ClaimedDelivery] {
        try connection.query(
            Self.runSQL,
            [endpointID, streamID, sequence, instanceID, lease.secondsValue, max(limit, 0), head]
        ).map(ClaimedDelivery.decode)
    }

    /// The most ready heads a claim hands back as candidates.
    public static let maximumCandidates = 512

    /// Leases the first of `candidates` that is still due, not leased, the head of its stream
    /// (nothing earlier unfinished but what `answered` lists) and of an active endpoint, in one
    /// statement (one each was a round trip per stale candidate); answers its index. Nil also
    /// when the one chosen was taken elsewhere meanwhile: the slot ends, and the next claim
    /// sees the rest.
    private func takeHead(
        of candidates: [DeliveryCandidate], answered: [String], lease: Duration, on connection: PostgresConnection
    ) throws -> Int? {
        guard !candidates.isEmpty else { return nil }
        let ordinal = try connection.query(
            Self.headSQL,
            [
                candidates.map(\.deliveryID), candidates.map(\.endpointID), candidates.map(\.streamID), candidates.map(\.sequence),
                answered, instanceID, lease.secondsValue,
            ]
        ).first?.decode(0, as: Int64.self)
        return ordinal.map { Int($0) - 1 }
    }

    /// Gives back leases this instance took but will not use (the rest of a run after a failed
    /// attempt): they would otherwise count against their endpoint until they expire.
    public func releaseLeases(of deliveries: [ClaimedDelivery]) async throws {
        guard !deliveries.isEmpty else { return }
        try await pool.withConnection(commit: .asynchronous) { connection in
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
