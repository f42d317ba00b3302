import FerryCore
import Foundation
import Postgres

/// Sessions, always scoped by tenant: another tenant's session is simply not found.
public struct SessionStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Creates a session. A background session whose identifier a live session of the tenant
    /// already uses re-attaches to that session instead (`reattached` is then true), as
    /// re-creating a background URLSession after a relaunch does.
    public func create(tenantID: String, _ creation: SessionCreation) async throws -> (session: SessionRecord, reattached: Bool) {
        let configuration = try JSONColumn.encode(creation.configuration)
        return try await pool.withTransaction { connection in
            // A concurrent creation with the same identifier makes this insert wait for it, then
            // do nothing: both callers end up re-attached to the one session.
            let inserted = try connection.query(
                """
                INSERT INTO sessions (id, tenant_id, kind, identifier, session_description, configuration)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (tenant_id, identifier) WHERE kind = 'background' AND state = 'valid' DO NOTHING
                RETURNING \(Self.columns)
                """,
                [
                    IDs.make("ses"), tenantID, creation.configuration.kind.rawValue, creation.configuration.identifier,
                    creation.sessionDescription, configuration,
                ]
            )
            let session: SessionRecord
            let reattached: Bool
            if let row = inserted.first {
                (session, reattached) = (try Self.decode(row), false)
            } else {
                let existing = try connection.query(
                    """
                    SELECT \(Self.columns) FROM sessions
                    WHERE tenant_id = $1 AND identifier = $2 AND kind = 'background' AND state = 'valid'
                    """,
                    [tenantID, creation.configuration.identifier]
                )
                guard let row = existing.first else { throw StoreError.conflict("The background session was invalidated meanwhile; create it again.") }
                (session, reattached) = (try Self.decode(row), true)
            }
            // A re-created background session's new delegate replaces the old one.
            if let delegate = creation.delegate {
                try WebhookEndpointRows.attach(delegate, toSession: session.id, tenantID: tenantID, on: connection)
            }
            return (session, reattached)
        }
    }

    public func find(tenantID: String, id: String) async throws -> SessionRecord {
        try await pool.withConnection { connection in
            guard let row = try connection.query(
                "SELECT \(Self.columns) FROM sessions WHERE tenant_id = $1 AND id = $2", [tenantID, id]
            ).first else { throw StoreError.notFound(resource: "session") }
            return try Self.decode(row)
        }
    }

    /// A page of the tenant's sessions, oldest first; `after` is the last id of the previous page.
    public func list(tenantID: String, limit: Int, after: String?) async throws -> Page<SessionRecord> {
        try await pool.withConnection { connection in
            try Page.inCreationOrder(
                of: "sessions", columns: Self.columns, tenantID: tenantID, limit: limit, after: after, resource: "session",
                on: connection, decode: Self.decode, cursor: \.id
            )
        }
    }

    static let columns = "id, tenant_id, configuration, session_description, state, created_at, invalidated_at, is_shared"

    static func decode(_ row: PostgresRow) throws -> SessionRecord {
        SessionRecord(
            id: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            configuration: try row.decodeJSON("configuration", as: SessionConfiguration.self),
            sessionDescription: try row.decode("session_description"),
            state: SessionState(rawValue: try row.decode("state", as: String.self)) ?? .valid,
            createdAt: try row.decode("created_at"),
            invalidatedAt: try row.decode("invalidated_at"),
            isShared: try row.decode("is_shared")
        )
    }
}
