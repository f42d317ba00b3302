import FerryCore
import Postgres

extension SessionStore {
    /// `PATCH /v1/sessions/{id}`: changes `sessionDescription`, in any state of the session, as
    /// URLSession allows.
    public func update(tenantID: String, sessionID: String, _ update: SessionUpdate) async throws -> SessionRecord {
        let (setsDescription, description): (Bool, String?) = switch update.sessionDescription {
        case .some(let value): (true, value)
        case .none: (false, nil)
        }
        return try await pool.withConnection { connection in
            guard let row = try connection.query(
                """
                UPDATE sessions SET session_description = CASE WHEN $3 THEN $4 ELSE session_description END
                WHERE tenant_id = $1 AND id = $2
                RETURNING \(Self.columns)
                """,
                [tenantID, sessionID, setsDescription, description]
            ).first else { throw StoreError.notFound(resource: "session") }
            return try Self.decode(row)
        }
    }
}
