import FerryCore
import Postgres

extension SessionStore {
    /// The tenant's `URLSession.shared`: a default session with URLSession's default
    /// configuration and no delegate, made the first time the tenant names it. Concurrent first
    /// uses end up with the one session (a unique index allows one per tenant).
    public func shared(tenantID: String) async throws -> SessionRecord {
        try await pool.withConnection { connection in
            let select = "SELECT \(Self.columns) FROM sessions WHERE tenant_id = $1 AND is_shared"
            if let row = try connection.query(select, [tenantID]).first { return try Self.decode(row) }
            let configuration = try JSONColumn.encode(SessionConfiguration(kind: .default))
            if let row = try connection.query(
                """
                INSERT INTO sessions (id, tenant_id, kind, configuration, is_shared) VALUES ($1, $2, 'default', $3, true)
                ON CONFLICT (tenant_id) WHERE is_shared DO NOTHING
                RETURNING \(Self.columns)
                """,
                [IDs.make("ses"), tenantID, configuration]
            ).first { return try Self.decode(row) }
            // Another request made it between the two statements.
            guard let row = try connection.query(select, [tenantID]).first else {
                throw StoreError.conflict("The shared session could not be made; try again.")
            }
            return try Self.decode(row)
        }
    }
}
