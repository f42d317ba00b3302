import FerryCore
import Foundation
import Postgres

/// Tenants and their API keys.
public struct TenantStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Creates a tenant with its first API key. The key is returned once and stored only as a hash.
    public func create(name: String, quotas: TenantQuotas) async throws -> (tenant: TenantRecord, apiKey: String) {
        let tenantID = IDs.make("ten")
        var random = SystemRandomNumberGenerator()
        let apiKey = APIKey.generate(using: &random)
        guard let parsed = APIKey.parse(apiKey) else { throw StoreError.conflict("generated an API key that does not parse") }
        let tenant = try await pool.withTransaction { connection in
            let rows = try connection.query(
                """
                INSERT INTO tenants (id, name, max_concurrent_transfers, max_stored_bytes, requests_per_second, max_task_bytes)
                VALUES ($1, $2, $3, $4, $5, $6)
                RETURNING \(Self.columns)
                """,
                [tenantID, name, quotas.maxConcurrentTransfers, quotas.maxStoredBytes, quotas.requestsPerSecond, quotas.maxTaskBytes]
            )
            try Self.insertKey(parsed, tenantID: tenantID, on: connection)
            return try Self.decode(rows.firstRow())
        }
        return (tenant, apiKey)
    }

    /// The tenant an API key belongs to (suspended ones too: the caller tells them apart), or nil
    /// for an unknown or revoked key (the caller answers 401 for both alike).
    public func authenticate(_ key: ParsedAPIKey) async throws -> TenantRecord? {
        try await pool.withConnection { connection in
            let rows = try connection.query(
                """
                SELECT k.id AS key_id, k.key_hash, (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale,
                       \(Self.columns(prefix: "t."))
                FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
                WHERE k.lookup_prefix = $1 AND k.revoked_at IS NULL
                """,
                [key.lookupPrefix]
            )
            for row in rows where constantTimeEquals(try row.decode("key_hash", as: [UInt8].self), key.hash) {
                // lastUsedAt is kept to the minute: writing it on every request would turn each read into a write.
                if try row.decode("stale", as: Bool.self) {
                    try connection.execute("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [try row.decode("key_id", as: String.self)])
                }
                return try Self.decode(row)
            }
            return nil
        }
    }

    public func find(id: String) async throws -> TenantRecord? {
        try await pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM tenants WHERE id = $1", [id]).first.map(Self.decode)
        }
    }

    @discardableResult
    static func insertKey(_ key: ParsedAPIKey, tenantID: String, on connection: PostgresConnection) throws -> String {
        let id = IDs.make("key")
        try connection.execute(
            "INSERT INTO api_keys (id, tenant_id, lookup_prefix, key_hash) VALUES ($1, $2, $3, $4)",
            [id, tenantID, key.lookupPrefix, key.hash]
        )
        return id
    }

    static let columns = columns(prefix: "")

    static func columns(prefix p: String) -> String {
        """
        \(p)id, \(p)name, \(p)status, \(p)max_concurrent_transfers, \(p)max_stored_bytes, \
        \(p)requests_per_second, \(p)max_task_bytes, \(p)created_at
        """
    }

    static func decode(_ row: PostgresRow) throws -> TenantRecord {
        TenantRecord(
            id: try row.decode("id"),
            name: try row.decode("name"),
            status: TenantStatus(rawValue: try row.decode("status", as: String.self)) ?? .active,
            quotas: TenantQuotas(
                maxConcurrentTransfers: try row.decode("max_concurrent_transfers"),
                maxStoredBytes: try row.decode("max_stored_bytes"),
                requestsPerSecond: try row.decode("requests_per_second"),
                maxTaskBytes: try row.decode("max_task_bytes")
            ),
            createdAt: try row.decode("created_at")
        )
    }
}
