import FerryCore
import Foundation
import Postgres

/// What operators do with tenants: list, change quotas and status, manage API keys.
extension TenantStore {
    public func list(limit: Int, after: String?) async throws -> Page<TenantRecord> {
        try await pool.withConnection { connection in
            try Page.inCreationOrder(
                of: "tenants", columns: Self.columns, tenantID: nil, limit: limit, after: after, resource: "tenant",
                on: connection, decode: Self.decode, cursor: \.id
            )
        }
    }

    /// A change to a tenant: fields left nil stay as they are; a quota set to `.some(nil)` is lifted.
    public struct Update: Sendable {
        public var name: String?
        public var status: TenantStatus?
        public var maxConcurrentTransfers: Int??
        public var maxStoredBytes: Int64??
        public var requestsPerSecond: Double??
        public var maxTaskBytes: Int64??

        public init() {}
    }

    public func update(id: String, _ update: Update) async throws -> TenantRecord {
        try await pool.withTransaction { connection in
            guard let row = try connection.query("SELECT \(Self.columns) FROM tenants WHERE id = $1 FOR UPDATE", [id]).first else {
                throw StoreError.notFound(resource: "tenant")
            }
            var tenant = try Self.decode(row)
            if let name = update.name { tenant.name = name }
            if let status = update.status { tenant.status = status }
            if let value = update.maxConcurrentTransfers { tenant.quotas.maxConcurrentTransfers = value }
            if let value = update.maxStoredBytes { tenant.quotas.maxStoredBytes = value }
            if let value = update.requestsPerSecond { tenant.quotas.requestsPerSecond = value }
            if let value = update.maxTaskBytes { tenant.quotas.maxTaskBytes = value }
            let rows = try connection.query(
                """
                UPDATE tenants SET name = $2, status = $3, max_concurrent_transfers = $4, max_stored_bytes = $5,
                       requests_per_second = $6, max_task_bytes = $7, updated_at = now()
                WHERE id = $1 RETURNING \(Self.columns)
                """,
                [
                    id, tenant.name, tenant.status.rawValue, tenant.quotas.maxConcurrentTransfers, tenant.quotas.maxStoredBytes,
                    tenant.quotas.requestsPerSecond, tenant.quotas.maxTaskBytes,
                ]
            )
            if update.status == .active || update.maxConcurrentTransfers != nil {
                // Tasks held back by the old status or limit may be claimable now.
                try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.work, id])
            }
            return try Self.decode(rows.firstRow())
        }
    }

    /// An API key as operators see it: never the key itself.
    public struct KeyRecord: Sendable, Equatable {
        public var id: String
        public var lookupPrefix: String
        public var createdAt: Date
        public var lastUsedAt: Date?
        public var revokedAt: Date?
    }

    public func keys(tenantID: String) async throws -> [KeyRecord] {
        try await pool.withConnection { connection in
            guard try !connection.query("SELECT 1 FROM tenants WHERE id = $1", [tenantID]).isEmpty else {
                throw StoreError.notFound(resource: "tenant")
            }
            return try connection.query(
                "SELECT id, lookup_prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE tenant_id = $1 ORDER BY created_at",
                [tenantID]
            ).map { row in
                KeyRecord(
                    id: try row.decode("id"), lookupPrefix: try row.decode("lookup_prefix"), createdAt: try row.decode("created_at"),
                    lastUsedAt: try row.decode("last_used_at"), revokedAt: try row.decode("revoked_at")
                )
            }
        }
    }

    /// A new key for the tenant (rotation: the old ones keep working until revoked).
    public func addKey(tenantID: String) async throws -> (key: KeyRecord, apiKey: String) {
        var random = SystemRandomNumberGenerator()
        let apiKey = APIKey.generate(using: &random)
        guard let parsed = APIKey.parse(apiKey) else { throw StoreError.conflict("generated an API key that does not parse") }
        let id = try await pool.withTransaction { connection in
            guard try !connection.query("SELECT 1 FROM tenants WHERE id = $1", [tenantID]).isEmpty else {
                throw StoreError.notFound(resource: "tenant")
            }
            return try Self.insertKey(parsed, tenantID: tenantID, on: connection)
        }
        let key = try await keys(tenantID: tenantID).first { $0.id == id }
        guard let key else { throw StoreError.notFound(resource: "key") }
        return (key, apiKey)
    }

    public func revokeKey(tenantID: String, keyID: String) async throws {
        let revoked = try await pool.withConnection { connection in
            try connection.execute(
                "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE tenant_id = $1 AND id = $2", [tenantID, keyID]
            )
        }
        guard revoked == 1 else { throw StoreError.notFound(resource: "key") }
    }

    /// Bytes the tenant keeps on the server: finished downloads, partial files (of downloads
    /// under way, and those kept for resume data), blobs, and data tasks' bodies.
    public func storedBytes(tenantID: String) async throws -> Int64 {
        try await pool.withConnection { connection in
            try connection.query(
                """
                SELECT (SELECT coalesce(sum(bytes_received), 0) FROM tasks WHERE tenant_id = $1 AND download_file IS NOT NULL)
                     + (SELECT coalesce(sum(coalesce((checkpoint->>'bytesOnDisk')::bigint, bytes_received)), 0) FROM tasks
                        WHERE tenant_id = $1 AND download_file IS NULL AND kind = 'download'
                          AND (state <> 'completed' OR checkpoint IS NOT NULL))
                     + (SELECT coalesce(sum(size), 0) FROM blobs WHERE tenant_id = $1)
                     + (SELECT coalesce(sum(octet_length(b.response_body)), 0) FROM task_bodies b JOIN tasks t ON t.id = b.task_id
                        WHERE t.tenant_id = $1 AND b.response_body IS NOT NULL)
                """,
                [tenantID]
            ).firstRow().decode(0, as: Int64.self)
        }
    }
}
