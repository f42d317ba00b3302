import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// How many deliveries may be in flight at once, so that one slow or dead endpoint (or one
    /// tenant with many of them) cannot take every slot.
    public struct ClaimLimits: Sendable {
        public var total: Int
        /// A cap on every endpoint's own `maximumInFlight`.
        public var perEndpoint: Int
        public var perTenant: Int
        public var lease: Duration

        public init(total: Int, perEndpoint: Int, perTenant: Int, lease: Duration) {
            self.total = total
            self.perEndpoint = perEndpoint
            self.perTenant = perTenant
            self.lease = lease
        }
    }

    /// Claims due deliveries (up to `limits.total`), each the oldest unfinished one of its stream
    /// (and a session's own one only after every earlier one of its tasks), round-robin across
    /// endpoints and tenants. Also says when the next one falls due (zero when ready heads
    /// were left for want of room).
    ///
    /// `answered`: deliveries this instance sent and saw answered 2xx whose record is not written
    /// yet. They count as finished here: their streams' next deliveries may be claimed, and they
    /// are not in flight. (Other instances wait for the record; their claims are conservative.)
    ///
    /// What is in flight is counted in streams, not leases: a stream sends one request at a time,
    /// whether its slot holds one leased delivery or a run of them (`claimNext`).
    ///
    /// Also answers the ready heads of task streams it left for want of room (up to
    /// `maximumCandidates`, oldest first): a slot whose stream runs out takes one of its
    /// endpoint's (`claimNext(orOneOf:)`) instead of waiting for this claim again, which reads every
    /// pending delivery and ran one at a time for every freed slot of the instance.
    ///
    /// `full`: the endpoints among those candidates' that had more ready heads than room (not
    /// those left for their tenant's limit, or skipped because another claim held them).
    public func claimDue(
        _ limits: ClaimLimits, answered: [String] = []
    ) async throws -> (claimed: [ClaimedDelivery], candidates: [DeliveryCandidate], full: Set<String>, nextDueIn: Duration?) {
        guard limits.total > 0 else { return ([], [], [], nil) }
        let instanceID = self.instanceID
        // Planned once, by key (`ClaimPlanTests` checks that plan): planning it each time cost
        // 40% of running it in bench/decisions.sh.
        return try await pool.withTransaction(commit: .asynchronous, plans: .byKeyPlannedOnce) { connection in
            let rows = try connection.query(
                Self.claimSQL,
                [instanceID, limits.perEndpoint, limits.perTenant, limits.total, limits.lease.secondsValue, answered, Self.maximumCandidates]
            )
            var ids: [String] = []
            var candidates: [DeliveryCandidate] = []
            var full: Set<String> = []
            for row in rows {
                let id = try row.decode(0, as: String.self)
                if try row.decode(4, as: Bool.self) {
                    ids.append(id)
                } else {
                    let endpointID = try row.decode(1, as: String.self)
                    candidates.append(DeliveryCandidate(
                        deliveryID: id, endpointID: endpointID, streamID: try row.decode(2), sequence: try row.decode(3)
                    ))
                    if try row.decode(5, as: Bool.self) { full.insert(endpointID) }
                }
            }
            let claimed = try ClaimedDelivery.load(ids: ids, on: connection)
            // The heads left behind were due as the claim began, so the next due time is now:
            // only without them is it worth a pass over every pending delivery (in
            // bench/decisions.sh's data tasks, 184 ms of PostgreSQL's time against 951 ms for the
            // claims themselves). Should slots take them all meanwhile, a retry that falls due
            // within the idle poll waits for a ring or the poll.
            guard candidates.isEmpty else { return (claimed, candidates, full, .zero) }
            let nextDue = try connection.query(
                """
                SELECT extract(epoch FROM min(d.next_attempt_at) - now())::float8
                FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                WHERE d.status = 'pending' AND w.status = 'active' AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())
                """
            ).firstRow().decode(0, as: Double?.self)
            return (claimed, candidates, full, nextDue.map { .milliseconds(Int64(max($0, 0) * 1000)) })
        }
    }

    /// `claimDue`'s statement ($1 instance, $2 the cap on endpoints' limits, $3 the tenant limit,
    /// $4 how many to take, $5 lease seconds, $6 answered, $7 how many candidates). Its plan must
    /// not compare every pair of ready heads (`ClaimPlanTests`).
    static let claimSQL = """
        WITH heads AS (
            -- The oldest unfinished delivery of each stream, read in the order of the
            -- stream index: half the time of testing every pending delivery for an
            -- earlier one of its stream.
            SELECT DISTINCT ON (p.endpoint_id, p.stream_id)
                   p.id, p.endpoint_id, p.tenant_id, p.session_id, p.task_id, p.event_position,
                   p.next_attempt_at, p.lease_expires_at, p.stream_id, p.sequence
            FROM webhook_deliveries p WHERE p.status = 'pending' AND p.id <> ALL($6::text[])
            ORDER BY p.endpoint_id, p.stream_id, p.sequence
        ), active_endpoints AS MATERIALIZED (
            -- The heads' active endpoints and their limits, as a map looked up once per head:
            -- joined (or looked up one by one), the planner compared every head with every
            -- endpoint (see `ClaimPlanTests`). Materialized, so that it is made once: inlined,
            -- it was made again for every head when the statistics said few were pending.
            SELECT coalesce(jsonb_object_agg(w.id, least(w.maximum_in_flight, $2)), '{}') AS limits
            FROM webhook_endpoints w
            WHERE w.status = 'active' AND w.id IN (SELECT DISTINCT endpoint_id FROM heads)
        ), ready AS (
            SELECT d.id, d.endpoint_id, d.tenant_id, d.next_attempt_at, (m.limits ->> d.endpoint_id)::int AS endpoint_limit,
                   d.stream_id, d.sequence, d.task_id
            FROM heads d CROSS JOIN active_endpoints m
            WHERE m.limits ? d.endpoint_id AND d.next_attempt_at <= now()
              AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())
              -- A session's own events (no task) also wait for every earlier delivery of
              -- its tasks to this endpoint: the delegate queue is serial, so
              -- didBecomeInvalidWithError follows the last didCompleteWithError.
              AND (d.task_id IS NOT NULL OR NOT EXISTS (
                  SELECT 1 FROM webhook_deliveries p
                  WHERE p.endpoint_id = d.endpoint_id AND p.session_id = d.session_id
                    AND p.status = 'pending' AND p.task_id IS NOT NULL AND p.event_position < d.event_position
                    AND p.id <> ALL($6::text[])))
        ), busy_streams AS (
            \(streamsInFlightSQL(answered: "$6"))
        ), busy AS (
            -- Streams in flight by endpoint and by tenant, as maps, one look-up per head: joined,
            -- the planner compared every head with every busy endpoint (see `ClaimPlanTests`).
            SELECT (SELECT coalesce(jsonb_object_agg(endpoint_id, n), '{}')
                    FROM (SELECT endpoint_id, count(*) AS n FROM busy_streams GROUP BY endpoint_id) e) AS endpoints,
                   (SELECT coalesce(jsonb_object_agg(tenant_id, n), '{}')
                    FROM (SELECT tenant_id, count(*) AS n FROM busy_streams GROUP BY tenant_id) t) AS tenants
        ), by_endpoint AS (
            SELECT r.*, row_number() OVER (PARTITION BY r.endpoint_id ORDER BY r.next_attempt_at, r.id)
                        + coalesce((b.endpoints ->> r.endpoint_id)::int, 0) AS endpoint_slot
            FROM ready r CROSS JOIN busy b
        ), by_tenant AS (
            SELECT e.*, row_number() OVER (PARTITION BY e.tenant_id ORDER BY e.endpoint_slot, e.next_attempt_at, e.id)
                        + coalesce((b.tenants ->> e.tenant_id)::int, 0) AS tenant_slot
            FROM by_endpoint e CROSS JOIN busy b
            WHERE e.endpoint_slot <= e.endpoint_limit
        ), picked AS (
            SELECT d.id FROM webhook_deliveries d JOIN by_tenant k ON k.id = d.id
            WHERE k.tenant_slot <= $3
              AND d.status = 'pending' AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())
            ORDER BY k.tenant_slot, k.endpoint_slot, k.next_attempt_at
            LIMIT $4
            FOR NO KEY UPDATE OF d SKIP LOCKED
        ), leased AS (
            UPDATE webhook_deliveries d SET lease_owner = $1, lease_token = \(Self.nextLeaseToken(after: "d.lease_token")),
                lease_expires_at = now() + make_interval(secs => $5), updated_at = now()
            FROM picked WHERE d.id = picked.id
            RETURNING d.id
        )
        -- What was leased, then the ready task-stream heads left for want of room, oldest
        -- first (candidates for slots whose streams run out: see `claimNext`).
        -- From by_endpoint, which holds every ready head with its slot: joined back to
        -- ready, both estimated at one row, the planner compared every pair (a million
        -- comparisons, 160 ms, for a thousand ready heads).
        SELECT e.id, e.endpoint_id, e.stream_id, e.sequence, l.id IS NOT NULL AS leased,
               e.endpoint_slot > e.endpoint_limit AS over_endpoint_limit
        FROM by_endpoint e LEFT JOIN leased l ON l.id = e.id
        WHERE l.id IS NOT NULL OR e.task_id IS NOT NULL
        ORDER BY l.id IS NULL, e.next_attempt_at, e.id
        LIMIT $4 + $7
        """

    /// The streams in flight, by endpoint and tenant: those with a leased pending delivery, but
    /// for the deliveries in `answered` (a parameter such as "$6"). `claimDue` and `claimOneOf`
    /// count room from the same rows.
    static func streamsInFlightSQL(answered: String) -> String {
        """
        SELECT DISTINCT endpoint_id, tenant_id, stream_id FROM webhook_deliveries
            WHERE status = 'pending' AND lease_expires_at > now() AND id <> ALL(\(answered)::text[])
        """
    }

    /// Records an attempt and applies `plan` (which sees since when the endpoint has been
    /// failing; nil for an attempt answered 2xx, whose plan must not depend on it). The delivery's state changes only if this instance still holds the lease it
    /// claimed with; the attempt itself is always recorded. For decisions, `decidedBy` is
    /// written on the delivery (migration 0020). Returns the plan applied, or nil when the lease was lost.
    @discardableResult
    public func record(
        _ attempt: AttemptReport, for claim: ClaimedDelivery, decidedBy: String? = nil,
        plan: @escaping @Sendable (_ failingSince: Date?) -> DeliveryPlan
    ) async throws -> DeliveryPlan? {
        let instanceID = self.instanceID
        let milliseconds = attempt.duration.wholeMilliseconds
        return try await pool.withTransaction(commit: .asynchronous) { connection in
            try connection.execute(
                """
                INSERT INTO webhook_attempts (delivery_id, started_at, duration_ms, status_code, error, response_excerpt)
                VALUES ($1, $2, $3, $4, $5, $6)
                """,
                [claim.deliveryID, attempt.startedAt, milliseconds, attempt.statusCode, attempt.error, attempt.responseExcerpt]
            )
            // Who decided goes on the delivery (migration 0020), whether the lease is still held or
            // not: with the state change below when it is held, else by itself.
            let recordWhoDecidedAlone = {
                guard let decidedBy else { return }
                try connection.execute(
                    "UPDATE webhook_deliveries SET decided_by = $2 WHERE id = $1 AND decided_by IS NULL", [claim.deliveryID, decidedBy]
                )
            }
            // A 2xx's plan does not depend on the endpoint's failure history: reading it would lock
            // the endpoint's row, and with it every attempt to the endpoint would wait for the one
            // before to commit. Only failures, which change that history, take the lock (one that
            // lets deliveries referencing the endpoint be inserted meanwhile).
            let answered = attempt.statusCode.map { (200..<300).contains($0) } ?? false
            let next: DeliveryPlan
            if answered {
                next = plan(nil)
            } else {
                guard let endpointRow = try connection.query(
                    "SELECT failing_since FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE", [claim.endpointID]
                ).first else {
                    try recordWhoDecidedAlone()
                    return nil
                }
                next = plan(try endpointRow.decode(0, as: Date?.self))
            }
            let updated = try connection.execute(
                """
                UPDATE webhook_deliveries SET
                    status = $4, attempts = attempts + 1, next_attempt_at = coalesce($5, next_attempt_at),
                    last_status_code = $6, last_error = $7,
                    delivered_at = CASE WHEN $4 = 'delivered' THEN now() ELSE delivered_at END,
                    decided_by = coalesce(decided_by, $8), lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
                WHERE id = $1 AND lease_owner = $2 AND lease_token = $3
                """,
                [
                    claim.deliveryID, instanceID, claim.leaseToken, next.status.rawValue, next.nextAttemptAt, attempt.statusCode,
                    attempt.error, decidedBy,
                ]
            )
            guard updated == 1 else {
                try recordWhoDecidedAlone()
                return nil
            }
            switch next.endpoint {
            case .unchanged:
                break
            case .answering:
                try connection.execute(
                    "UPDATE webhook_endpoints SET failing_since = NULL, updated_at = now() WHERE id = $1 AND failing_since IS NOT NULL",
                    [claim.endpointID]
                )
            case .failing(let since):
                try connection.execute(
                    "UPDATE webhook_endpoints SET failing_since = $2, updated_at = now() WHERE id = $1", [claim.endpointID, since]
                )
            case .disable(let reason):
                try connection.execute(
                    """
                    UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $2, disabled_at = now(),
                                                 failing_since = coalesce(failing_since, now()), updated_at = now()
                    WHERE id = $1 AND status = 'active'
                    """,
                    [claim.endpointID, reason]
                )
            }
            return next
        }
    }
}
