import FerryCore
import Foundation
import Postgres

/// `/admin/v1/overview`: what operators look at first.
public struct OverviewStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    public struct TenantLine: Sendable, Encodable {
        public var id: String
        public var name: String
        public var status: String
        public var sessions: Int
        public var tasks: [String: Int]
        /// Bytes received and sent by tasks that completed since midnight UTC.
        public var bytesToday: Int64
        public var failingWebhookEndpoints: Int
    }

    public struct InstanceLine: Sendable, Encodable {
        public var id: String
        public var version: String
        public var workers: Int
        public var runningTransfers: Int
        public var startedAt: Date
        public var heartbeatAt: Date
        /// No heartbeat for a minute: the instance is gone (its leases will be taken over).
        public var isStale: Bool
    }

    public struct Overview: Sendable, Encodable {
        public var tenants: [TenantLine]
        public var instances: [InstanceLine]
        public var queueDepth: Int
    }

    public func overview() async throws -> Overview {
        try await pool.withConnection { connection in
            var tasksByTenant: [String: [String: Int]] = [:]
            for row in try connection.query("SELECT tenant_id, state, count(*) FROM tasks GROUP BY tenant_id, state") {
                tasksByTenant[try row.decode(0), default: [:]][try row.decode(1)] = try row.decode(2, as: Int.self)
            }
            let tenants = try connection.query(
                """
                SELECT t.id, t.name, t.status,
                       (SELECT count(*) FROM sessions s WHERE s.tenant_id = t.id) AS sessions,
                       (SELECT coalesce(sum(bytes_received + bytes_sent), 0) FROM tasks k
                        WHERE k.tenant_id = t.id AND k.completed_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS bytes_today,
                       (SELECT count(*) FROM webhook_endpoints e
                        WHERE e.tenant_id = t.id AND (e.status = 'disabled' OR e.failing_since IS NOT NULL)) AS failing
                FROM tenants t ORDER BY t.created_at, t.id
                """
            ).map { row in
                let id: String = try row.decode("id")
                return TenantLine(
                    id: id, name: try row.decode("name"), status: try row.decode("status"),
                    sessions: try row.decode("sessions"), tasks: tasksByTenant[id] ?? [:],
                    bytesToday: try row.decode("bytes_today"), failingWebhookEndpoints: try row.decode("failing")
                )
            }
            let instances = try connection.query(
                """
                SELECT id, version, workers, running_transfers, started_at, heartbeat_at,
                       heartbeat_at < now() - interval '1 minute' AS stale
                FROM instances ORDER BY id
                """
            ).map { row in
                InstanceLine(
                    id: try row.decode("id"), version: try row.decode("version"), workers: try row.decode("workers"),
                    runningTransfers: try row.decode("running_transfers"), startedAt: try row.decode("started_at"),
                    heartbeatAt: try row.decode("heartbeat_at"), isStale: try row.decode("stale")
                )
            }
            let queueDepth = try connection.query(
                "SELECT count(*) FROM tasks WHERE state = 'running' AND lease_owner IS NULL"
            ).firstRow().decode(0, as: Int.self)
            return Overview(tenants: tenants, instances: instances, queueDepth: queueDepth)
        }
    }

    /// Any tenant's task, for support.
    public func task(id: String) async throws -> TaskRecord {
        try await pool.withConnection { connection in
            guard let row = try connection.query("SELECT \(TaskRow.columns) FROM tasks WHERE id = $1", [id]).first else {
                throw StoreError.notFound(resource: "task")
            }
            return try TaskRow.decode(row)
        }
    }
}
