import Postgres

/// The check that opens every read of a session's contents: a session of another tenant, or none,
/// answers 404 (never 403), whatever the contents would have been.
enum SessionExistence {
    static func require(tenantID: String, sessionID: String, on connection: PostgresConnection) throws {
        guard try !connection.query("SELECT 1 FROM sessions WHERE tenant_id = $1 AND id = $2", [tenantID, sessionID]).isEmpty else {
            throw StoreError.notFound(resource: "session")
        }
    }
}
