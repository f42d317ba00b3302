import FerryCore
import Foundation
import Postgres

/// Uploaded blobs, scoped by tenant. The bytes live in the tenant's blobs folder.
public struct BlobStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Records a blob whose file is already in place under its id.
    public func create(id: String, tenantID: String, size: Int64, sha256: String) async throws -> BlobRecord {
        try await pool.withConnection { connection in
            try Self.decode(try connection.query(
                "INSERT INTO blobs (id, tenant_id, size, sha256) VALUES ($1, $2, $3, $4) RETURNING \(Self.columns)",
                [id, tenantID, size, Self.bytes(fromHex: sha256)]
            ).firstRow())
        }
    }

    public func find(tenantID: String, id: String) async throws -> BlobRecord {
        try await pool.withConnection { connection in
            guard let row = try connection.query("SELECT \(Self.columns) FROM blobs WHERE tenant_id = $1 AND id = $2", [tenantID, id]).first else {
                throw StoreError.notFound(resource: "blob")
            }
            return try Self.decode(row)
        }
    }

    public func list(tenantID: String, limit: Int, after: String?) async throws -> Page<BlobRecord> {
        try await pool.withConnection { connection in
            try Page.inCreationOrder(
                of: "blobs", columns: Self.columns, tenantID: tenantID, limit: limit, after: after, resource: "blob",
                on: connection, decode: Self.decode, cursor: \.id
            )
        }
    }

    /// Forgets a blob; refused while an unfinished upload task still sends it.
    public func delete(tenantID: String, id: String) async throws {
        try await pool.withTransaction { connection in
            guard try !connection.query("SELECT 1 FROM blobs WHERE tenant_id = $1 AND id = $2 FOR UPDATE", [tenantID, id]).isEmpty else {
                throw StoreError.notFound(resource: "blob")
            }
            let users = try connection.query(
                """
                SELECT id FROM tasks WHERE tenant_id = $1 AND state <> 'completed'
                  AND upload_source->'blob'->>'id' = $2 LIMIT 1
                """,
                [tenantID, id]
            )
            if let user = try users.first?.decode(0, as: String.self) {
                throw StoreError.conflict("Task \(user) still uploads this blob; delete it when the task has completed.")
            }
            try connection.execute("DELETE FROM blobs WHERE id = $1", [id])
        }
    }

    static let columns = "id, tenant_id, size, sha256, created_at"

    static func decode(_ row: PostgresRow) throws -> BlobRecord {
        BlobRecord(
            id: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            size: try row.decode("size"),
            sha256: try row.decode("sha256", as: [UInt8].self).map { String(format: "%02x", $0) }.joined(),
            createdAt: try row.decode("created_at")
        )
    }

    static func bytes(fromHex hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            if let byte = UInt8(hex[index..<next], radix: 16) { bytes.append(byte) }
            index = next
        }
        return bytes
    }
}
