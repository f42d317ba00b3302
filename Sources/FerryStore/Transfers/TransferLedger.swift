import FerryCore
import Foundation
import Postgres

/// The transfer engine's side of the task table: claims under leases, progress and heartbeats,
/// outcomes, and the reaping of leases whose owner died. Every write by an owner is fenced by
/// its lease epoch, so a stalled owner that lost its lease cannot overwrite the new owner.
public struct TransferLedger: Sendable {
    let pool: PostgresPool
    public let instanceID: String
    /// How long a lease lasts without renewal. Owners renew every heartbeat (about a second);
    /// another instance takes over a task this long after its owner stopped renewing.
    public let leaseDuration: Duration
    /// Where ephemeral sessions keep their credentials (this process's memory).
    let ephemeralCredentials: EphemeralCredentials

    public init(
        pool: PostgresPool, instanceID: String, leaseDuration: Duration = .seconds(15),
        ephemeralCredentials: EphemeralCredentials = EphemeralCredentials()
    ) {
        self.pool = pool
        self.instanceID = instanceID
        self.leaseDuration = leaseDuration
        self.ephemeralCredentials = ephemeralCredentials
    }

    var leaseSeconds: Double { Double(leaseDuration.components.seconds) + Double(leaseDuration.components.attoseconds) / 1e18 }

    /// Any 64-bit number unique to this purpose: claims are serialised across instances.
    static let claimLockKey: Int64 = 0x6665_7272_7901

    /// Claims up to `limit` runnable tasks.
    ///
    /// - Fair across tenants: the first eligible task of every tenant comes before the second of
    ///   any, and so on, so one tenant's ten thousand queued tasks never starve another's one.
    /// - Within a session, by `priority`, then age.
    /// - `httpMaximumConnectionsPerHost` holds for the whole cluster: an instance claims for a host
    ///   only while fewer than the limit are leased by others, and runs no more than the limit at
    ///   once. Alone on a host, it leases up to twice the limit and keeps the second half waiting
    ///   locally (leased and `running`, as URLSession's tasks waiting for a connection are; their
    ///   request timeout does not run). A tenant's `maxConcurrentTransfers` counts leases, and
    ///   such a tenant takes nothing ahead. Claims are serialised by an advisory lock so two
    ///   instances cannot both take the last slot. Tasks held back stay queued.
    public func claim(limit: Int) async throws -> [ClaimedTask] {
        guard limit > 0 else { return [] }
        let instanceID = self.instanceID
        let leaseSeconds = self.leaseSeconds
        let ephemeralCredentials = self.ephemeralCredentials
        // The claim reads tasks through its indexes only, under the claim lock: both taken with
        // BEGIN, in one round trip.
        let setUp = "SELECT pg_advisory_xact_lock(\(Self.claimLockKey))"
        return try await pool.withTransaction(setUp: setUp, plans: .byKeyPlannedOnce) { connection in
            let claimed = try connection.query(
                """
                WITH RECURSIVE host_groups AS (
                    -- Every (session, host) with runnable tasks, found by skipping through
                    -- tasks_claimable_by_host one group at a time rather than reading every task.
                    (SELECT session_id, host FROM tasks
                     WHERE state = 'running' AND lease_owner IS NULL
                     ORDER BY session_id, host LIMIT 1)
                    UNION ALL
                    SELECT next.session_id, next.host FROM host_groups g CROSS JOIN LATERAL (
                        SELECT session_id, host FROM tasks
                        WHERE state = 'running' AND lease_owner IS NULL AND (session_id, host) > (g.session_id, g.host)
                        ORDER BY session_id, host LIMIT 1
                    ) next
                ), live AS (
                    SELECT tenant_id, session_id, host, lease_owner FROM tasks
                    WHERE lease_owner IS NOT NULL AND lease_expires_at > now()
                ), per_host AS (
                    SELECT session_id, host, count(*) AS n, count(*) FILTER (WHERE lease_owner <> $1) AS others
                    FROM live GROUP BY session_id, host
                ), per_tenant AS (
                    SELECT tenant_id, count(*) AS n FROM live GROUP BY tenant_id
                ), host_candidates AS (
                    -- From each group, its first tasks (priority, then age) up to its free slots.
                    -- An instance alone on a host holds up to four times its connection limit:
                    -- those beyond the limit wait here for a connection (the engine admits no
                    -- more than the limit), so a connection that frees starts the next transfer at
                    -- once rather than after a commit and a claim. Four, not two: an ended
                    -- transfer holds its lease until its end is written (file synced and renamed,
                    -- row updated: tens of milliseconds), and with small files several ends per
                    -- connection are in flight; at twice the limit, connections sat idle two
                    -- thirds of the time. Another instance claims only while fewer than the limit
                    -- are held, so transfers at once stay within it cluster-wide.
                    SELECT c.id, c.tenant_id, c.created_at, c.priority, ten.max_concurrent_transfers AS tenant_limit,
                           -- Beyond the connections free now: taken ahead, after everything else.
                           row_number() OVER (PARTITION BY g.session_id, g.host ORDER BY c.priority DESC, c.created_at)
                               > (s.configuration->>'httpMaximumConnectionsPerHost')::int - coalesce(h.n, 0) AS is_ahead
                    FROM host_groups g
                    JOIN sessions s ON s.id = g.session_id
                    JOIN tenants ten ON ten.id = s.tenant_id
                    LEFT JOIN per_host h ON h.session_id = g.session_id AND h.host = g.host
                    CROSS JOIN LATERAL (
                        SELECT t.id, t.tenant_id, t.created_at, t.priority FROM tasks t
                        WHERE t.session_id = g.session_id AND t.host = g.host
                          AND t.state = 'running' AND t.lease_owner IS NULL
                          AND (t.not_before IS NULL OR t.not_before <= now())
                        ORDER BY t.priority DESC, t.created_at
                        LIMIT least($2, greatest(0,
                            (s.configuration->>'httpMaximumConnectionsPerHost')::int * CASE WHEN coalesce(h.others, 0) = 0 THEN 4 ELSE 1 END
                            - coalesce(h.n, 0)))
                    ) c
                    WHERE ten.status = 'active'
                ), tenant_ranked AS (
                    -- Ranked within the tenant among those candidates only, so a task held back by
                    -- its host does not use up one of the tenant's slots (nor does one taken ahead
                    -- while another could run now).
                    SELECT c.id, c.created_at, c.tenant_limit, c.is_ahead, coalesce(pt.n, 0) AS tenant_live,
                           row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.is_ahead, c.priority DESC, c.created_at) AS tenant_rank
                    FROM host_candidates c LEFT JOIN per_tenant pt ON pt.tenant_id = c.tenant_id
                ), picked AS (
                    -- The first of every tenant before the second of any: fair across tenants.
                    -- A tenant with maxConcurrentTransfers takes nothing ahead: a task waiting
                    -- for a connection would hold one of its slots.
                    SELECT r.id FROM tenant_ranked r
                    WHERE r.tenant_limit IS NULL OR (r.tenant_rank + r.tenant_live <= r.tenant_limit AND NOT r.is_ahead)
                    ORDER BY r.is_ahead, r.tenant_rank, r.created_at
                    LIMIT $2
                ), taken AS (
                    -- Locked one by one by primary key, skipping any a command holds: a claim never
                    -- waits, so it cannot deadlock with a command locking a session's tasks.
                    -- The state is checked on the locked row, outside the lateral (LIMIT keeps it
                    -- from being pushed in): inside, it would let the planner walk
                    -- tasks_claimable_by_host, whose size its statistics underestimate right after a
                    -- burst, for every task instead of looking up the key.
                    SELECT l.id FROM picked p CROSS JOIN LATERAL (
                        SELECT t.id, t.state, t.lease_owner FROM tasks t
                        WHERE t.id = p.id
                        LIMIT 1
                        FOR UPDATE OF t SKIP LOCKED
                    ) l
                    WHERE l.state = 'running' AND l.lease_owner IS NULL
                )
                UPDATE tasks t SET
                    lease_owner = $1,
                    lease_expires_at = now() + make_interval(secs => $3),
                    lease_epoch = t.lease_epoch + 1,
                    -- A streamed upload's transfer asks for a new body stream first (those asked
                    -- for before are spent): counted here, so that a body the client PUTs before
                    -- the transfer's task.needNewBodyStream is written goes to that stream.
                    body_stream_generation = t.body_stream_generation + CASE WHEN t.upload_source ? 'stream' THEN 1 ELSE 0 END,
                    stop_reason = NULL,
                    started_at = coalesce(t.started_at, now()),
                    resource_deadline = coalesce(t.resource_deadline,
                        now() + make_interval(secs => (s.configuration->>'timeoutIntervalForResource')::double precision)),
                    updated_at = now()
                FROM taken, sessions s
                WHERE t.id = taken.id AND s.id = t.session_id
                RETURNING t.id
                """,
                [instanceID, limit, leaseSeconds]
            )
            guard !claimed.isEmpty else { return [] }
            let ids = try claimed.map { try $0.decode(0, as: String.self) }
            let rows = try connection.query(
                """
                SELECT t.id, t.tenant_id, t.session_id, t.kind, t.lease_epoch, t.attempt_count, t.original_request, t.earliest_begin_at,
                       t.priority, t.task_identifier, t.body_stream_generation,
                       t.upload_source, t.checkpoint, t.resource_deadline, t.bytes_expected_to_send,
                       s.configuration, b.request_body, ten.max_task_bytes, w.id AS delegate_endpoint_id, w.events AS delegate_events,
                       s.connection_generation, extract(epoch FROM now() - s.connections_renewed_at)::float8 AS connections_renewed_ago,
                       CASE WHEN t.earliest_begin_at IS NULL THEN false
                            ELSE EXISTS (SELECT 1 FROM events e WHERE e.task_id = t.id AND e.type = 'task.willBeginDelayedRequest')
                       END AS delayed_start_announced,
                       -- Written with a failed attempt's release, and never in a background session.
                       CASE WHEN t.attempt_count = 0 OR s.kind = 'background' THEN false
                            ELSE EXISTS (SELECT 1 FROM events e WHERE e.task_id = t.id AND e.type = 'task.isWaitingForConnectivity')
                       END AS connectivity_wait_announced
                FROM tasks t JOIN sessions s ON s.id = t.session_id JOIN tenants ten ON ten.id = t.tenant_id
                LEFT JOIN task_bodies b ON b.task_id = t.id
                LEFT JOIN webhook_endpoints w ON w.id = coalesce(t.delegate_endpoint_id, s.delegate_endpoint_id) AND w.status = 'active'
                WHERE t.id = ANY($1)
                """,
                [ids]
            )
            // The tasks of one claim are mostly of a few sessions: each configuration is decoded
            // once, not once per task (a visible cost of claims of many small downloads).
            var configurations: [String: SessionConfiguration] = [:]
            var claims = try rows.map { row in
                let sessionID = try row.decode("session_id", as: String.self)
                let configuration = try configurations[sessionID] ?? row.decodeJSON("configuration", as: SessionConfiguration.self)
                configurations[sessionID] = configuration
                var claim = try Self.decodeClaim(row, configuration: configuration)
                claim.earliestBeginDate = try row.decode("earliest_begin_at")
                claim.isDelayedStartAnnounced = try row.decode("delayed_start_announced")
                claim.isConnectivityWaitAnnounced = try row.decode("connectivity_wait_announced")
                claim.priority = try row.decode("priority")
                claim.taskIdentifier = try row.decode("task_identifier")
                claim.bodyStreamGeneration = try row.decode("body_stream_generation")
                claim.connectionGeneration = try row.decode("connection_generation")
                // As an age: the database's clock and this instance's may differ.
                claim.connectionsRenewedAt = try row.decode("connections_renewed_ago", as: Double?.self).map { Date(timeIntervalSinceNow: -$0) }
                if let endpointID = try row.decode("delegate_endpoint_id", as: String?.self) {
                    let events = WebhookEndpointRows.eventFilter(try row.decode("delegate_events", as: [String]?.self))
                    claim.delegate = DelegateSubscription(endpointID: endpointID, events: events)
                }
                return claim
            }
            // Rows of `ANY($1)` come in no particular order: the engine admits claims in this
            // order, which decides who of a host's tasks gets a connection first.
            claims.sort { $0.priority != $1.priority ? $0.priority > $1.priority : ($0.sessionID, $0.taskIdentifier) < ($1.sessionID, $1.taskIdentifier) }
            var credentialsBySession: [String: [StoredCredential]] = [:]
            var jarsBySession: [String: CookieJar] = [:]
            for index in claims.indices {
                let sessionID = claims[index].sessionID
                if credentialsBySession[sessionID] == nil {
                    // Ephemeral sessions keep their credentials in memory, as URLSession does.
                    credentialsBySession[sessionID] = claims[index].configuration.kind == .ephemeral
                        ? ephemeralCredentials.credentials(ofSession: sessionID)
                        : try CredentialStore.credentials(ofSession: sessionID, on: connection)
                }
                claims[index].credentials = credentialsBySession[sessionID] ?? []
                // Ephemeral sessions keep their cookies in the engine's memory, not here.
                if claims[index].configuration.kind != .ephemeral {
                    if jarsBySession[sessionID] == nil {
                        jarsBySession[sessionID] = try CookieStore.jar(ofSession: sessionID, on: connection)
                    }
                    claims[index].cookies = jarsBySession[sessionID] ?? CookieJar()
                }
            }
            return claims
        }
    }

    /// `configuration`: the session's, decoded by the caller (once per session of a claim).
    static func decodeClaim(_ row: PostgresRow, configuration: SessionConfiguration) throws -> ClaimedTask {
        ClaimedTask(
            taskID: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            sessionID: try row.decode("session_id"),
            kind: try TaskKind(rawValue: row.decode("kind")) ?? .data,
            leaseEpoch: try row.decode("lease_epoch"),
            previousAttempts: try row.decode("attempt_count", as: Int.self),
            configuration: configuration,
            originalRequest: try row.decodeJSON("original_request", as: TransferRequest.self),
            requestBody: try row.decode("request_body"),
            uploadSource: try row.decodeJSONIfPresent("upload_source", as: UploadSource.self),
            checkpoint: try row.decodeJSONIfPresent("checkpoint", as: TransferCheckpoint.self),
            resourceDeadline: try row.decode("resource_deadline"),
            bytesExpectedToSend: try row.decode("bytes_expected_to_send"),
            maxTaskBytes: try row.decode("max_task_bytes")
        )
    }
}
