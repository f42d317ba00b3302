extension WebhookLedger {
    /// `takeRun`'s statement ($1 endpoint, $2 stream, $3 after this sequence, $4 instance, $5
    /// lease seconds, $6 limit). Its plans must read the stream index by all three columns
    /// whatever the statistics say (`NextInStreamPlanTests`).
    static let runSQL = """
        WITH \(streamRun("run", endpoint: "$1", stream: "$2", after: "$3", limit: "$6")),
        \(leasedAndLoaded("run", instance: "$4", leaseSeconds: "$5"))
        """

    /// `takeOneOf`'s statement ($1 candidates, $2 their endpoints, $3 their streams, $4 their
    /// sequences, $5 answered, $6 instance, $7 lease seconds, $8 the run's limit, head included).
    /// Its plans must look the candidates up by their keys, and the chosen head's stream up by
    /// the stream index (`NextInStreamPlanTests`).
    static let switchSQL = switchSQL(.always)

    /// `switchSQL`, with first the run of the slot's own stream ($9 endpoint, $10 stream, $11
    /// after this sequence): only when it has none are the candidates looked at.
    static let switchAfterStreamSQL = switchSQL(.afterOwnStream)

    /// `switchSQL` only if the candidates' endpoint ($9) and its tenant have room for one more
    /// stream ($10 the cap on endpoints' limits, $11 the tenant limit), counted as `claimDue`
    /// counts them (leased pending deliveries, by stream). Answers one row at least, whose
    /// `has_room` says so; without a run, its delivery's columns are NULL.
    static let switchIfRoomSQL = switchSQL(.ifRoom)

    /// When `switchSQL` looks at its candidates.
    private enum SwitchCondition {
        case always
        case afterOwnStream
        case ifRoom
    }

    private static func switchSQL(_ condition: SwitchCondition) -> String {
        let (before, gate) = switch condition {
        case .always: ("", "")
        case .afterOwnStream:
            (streamRun("own_run", endpoint: "$9", stream: "$10", after: "$11", limit: "$8") + ",", "WHERE NOT EXISTS (SELECT 1 FROM own_run)")
        case .ifRoom:
            (
                """
                busy AS MATERIALIZED (
                    -- Made once and read twice, so the tenant's test cannot be pushed into it: there it
                    -- could read every delivery the tenant ever had, by webhook_deliveries_tenant.
                    \(streamsInFlightSQL(answered: "$5"))
                ), room AS (
                    SELECT w.status = 'active'
                       AND (SELECT count(*) FROM busy WHERE busy.endpoint_id = w.id) < least(w.maximum_in_flight, $10)
                       AND (SELECT count(*) FROM busy WHERE busy.tenant_id = w.tenant_id) < $11 AS ok
                    FROM webhook_endpoints w WHERE w.id = $9
                ),
                """,
                "WHERE coalesce((SELECT ok FROM room), false)"
            )
        }
        let leading = condition == .ifRoom
            ? "coalesce((SELECT ok FROM room), false) AS has_room, (SELECT ordinal FROM first) AS ordinal, "
            : "(SELECT ordinal FROM first) AS ordinal, "
        return """
            WITH \(before) offered AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[]) WITH ORDINALITY
                    AS c(id, endpoint_id, stream_id, sequence, ordinal)
                \(gate)
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
                SELECT d.id, d.status, d.lease_expires_at, d.endpoint_id, d.stream_id, d.sequence FROM webhook_deliveries d
                WHERE d.id = (SELECT id FROM first)
                FOR NO KEY UPDATE SKIP LOCKED
            ), head AS (
                SELECT l.id, l.endpoint_id, l.stream_id, l.sequence FROM locked l
                WHERE l.status = 'pending' AND (l.lease_expires_at IS NULL OR l.lease_expires_at < now())
            ), \(streamRun(
                "head_run", endpoint: "(SELECT endpoint_id FROM head)", stream: "(SELECT stream_id FROM head)",
                after: "(SELECT sequence FROM head)", limit: "$8 - 1"
            )), run AS (
                SELECT id FROM head UNION ALL SELECT id FROM head_run
                \(condition == .afterOwnStream ? "UNION ALL SELECT id FROM own_run" : "")
            ),
            \(leasedAndLoaded("run", instance: "$6", leaseSeconds: "$7", leading: leading, evenIfNone: condition == .ifRoom))
            """
    }

    /// SQL: two CTEs, `<name>_following` (the stream's pending deliveries after `after`, up to
    /// `limit`, locked in order) and `<name>` (the ids of those before the first that is not due or
    /// is leased: a stream is sent in order, so a run stops there).
    private static func streamRun(_ name: String, endpoint: String, stream: String, after: String, limit: String) -> String {
        """
        \(name)_following AS (
            SELECT n.id, n.sequence,
                   n.next_attempt_at <= now() AND (n.lease_expires_at IS NULL OR n.lease_expires_at < now()) AS takeable
            FROM webhook_deliveries n
            WHERE n.endpoint_id = \(endpoint) AND n.stream_id = \(stream) AND n.status = 'pending' AND n.sequence > \(after)
            ORDER BY n.sequence LIMIT \(limit)
            FOR NO KEY UPDATE
        ), \(name) AS (
            SELECT id FROM \(name)_following
            WHERE sequence < coalesce((SELECT min(sequence) FROM \(name)_following WHERE NOT takeable), 9223372036854775807)
        )
        """
    }

    /// SQL: the CTE `leased`, which leases the deliveries the CTE `run` lists (of active
    /// endpoints), and the statement's answer: them, loaded, in log order, after `leading` columns;
    /// `evenIfNone`: one row of NULLs after `leading` when none were leased.
    private static func leasedAndLoaded(
        _ run: String, instance: String, leaseSeconds: String, leading: String = "", evenIfNone: Bool = false
    ) -> String {
        let loaded = "leased d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id"
        return """
            leased AS (
                UPDATE webhook_deliveries d SET lease_owner = \(instance), lease_token = \(nextLeaseToken(after: "d.lease_token")),
                    lease_expires_at = now() + make_interval(secs => \(leaseSeconds)), updated_at = now()
                FROM \(run) r
                WHERE d.id = r.id
                  AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.status = 'active')
                RETURNING d.*
            )
            SELECT \(leading)\(ClaimedDelivery.columns)
            FROM \(evenIfNone ? "(SELECT 1) AS one LEFT JOIN (\(loaded)) ON true" : loaded)
            ORDER BY e.position
            """
    }
}
