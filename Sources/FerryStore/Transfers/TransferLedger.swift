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

    public init(pool: PostgresPool, instanceID: String, leaseDuration: Duration = .seconds(15)) {
        self.pool = pool
        self.instanceID = instanceID
        self.leaseDuration = leaseDuration
    }

    var leaseSeconds: Double { Double(leaseDuration.components.seconds) + Double(leaseDuration.components.attoseconds) / 1e18 }

    /// Claims up to `limit` runnable tasks, sharing fairly across tenants: the first waiting task
    /// of every tenant comes before the second of any, and so on; within a tenant, by priority
    /// then age. `FOR UPDATE SKIP LOCKED` lets several instances claim at once without waiting.
    public func claim(limit: Int) async throws -> [ClaimedTask] {
        guard limit > 0 else { return [] }
        let instanceID = self.instanceID
        let leaseSeconds = self.leaseSeconds
        return try await pool.withTransaction { connection in
            let claimed = try connection.query(
                """
                WITH candidates AS (
                    SELECT id, created_at,
                           row_number() OVER (PARTITION BY tenant_id ORDER BY priority DESC, created_at) AS tenant_rank
                    FROM tasks
                    WHERE state = 'running' AND lease_owner IS NULL AND (not_before IS NULL OR not_before <= now())
                ), picked AS (
                    SELECT t.id FROM tasks t JOIN candidates c ON c.id = t.id
                    WHERE t.state = 'running' AND t.lease_owner IS NULL
                    ORDER BY c.tenant_rank, c.created_at
                    LIMIT $2
                    FOR UPDATE OF t SKIP LOCKED
                )
                UPDATE tasks t SET
                    lease_owner = $1,
                    lease_expires_at = now() + make_interval(secs => $3),
                    lease_epoch = t.lease_epoch + 1,
                    attempt_count = t.attempt_count + 1,
                    stop_reason = NULL,
                    started_at = coalesce(t.started_at, now()),
                    resource_deadline = coalesce(t.resource_deadline,
                        now() + make_interval(secs => (s.configuration->>'timeoutIntervalForResource')::double precision)),
                    updated_at = now()
                FROM picked, sessions s
                WHERE t.id = picked.id AND s.id = t.session_id
                RETURNING t.id
                """,
                [instanceID, limit, leaseSeconds]
            )
            guard !claimed.isEmpty else { return [] }
            let ids = try claimed.map { try $0.decode(0, as: String.self) }
            let rows = try connection.query(
                """
                SELECT t.id, t.tenant_id, t.session_id, t.kind, t.lease_epoch, t.attempt_count, t.original_request,
                       t.upload_source, t.checkpoint, t.resource_deadline, t.bytes_expected_to_send,
                       s.configuration, b.request_body
                FROM tasks t JOIN sessions s ON s.id = t.session_id LEFT JOIN task_bodies b ON b.task_id = t.id
                WHERE t.id = ANY($1)
                """,
                [ids]
            )
            return try rows.map(Self.decodeClaim)
        }
    }

    static func decodeClaim(_ row: PostgresRow) throws -> ClaimedTask {
        ClaimedTask(
            taskID: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            sessionID: try row.decode("session_id"),
            kind: try TaskKind(rawValue: row.decode("kind")) ?? .data,
            leaseEpoch: try row.decode("lease_epoch"),
            previousAttempts: try row.decode("attempt_count", as: Int.self) - 1,
            configuration: try row.decodeJSON("configuration", as: SessionConfiguration.self),
            originalRequest: try row.decodeJSON("original_request", as: TransferRequest.self),
            requestBody: try row.decode("request_body"),
            uploadSource: try row.decodeJSONIfPresent("upload_source", as: UploadSource.self),
            checkpoint: try row.decodeJSONIfPresent("checkpoint", as: TransferCheckpoint.self),
            resourceDeadline: try row.decode("resource_deadline"),
            bytesExpectedToSend: try row.decode("bytes_expected_to_send")
        )
    }
}
