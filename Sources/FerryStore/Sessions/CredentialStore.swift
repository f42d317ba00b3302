import FerryCore
import Foundation
import Postgres

/// Each session's URLCredentialStorage. Passwords are read only by the transfer engine; the
/// API lists credentials without them. Ephemeral sessions' credentials stay in this process's
/// memory (`EphemeralCredentials`), never in PostgreSQL.
public struct CredentialStore: Sendable {
    let pool: PostgresPool
    let ephemeral: EphemeralCredentials

    public init(pool: PostgresPool, ephemeral: EphemeralCredentials = EphemeralCredentials()) {
        self.pool = pool
        self.ephemeral = ephemeral
    }

    /// `setCredential(_:for:)`: stores the credential, replacing the one of the same protection space.
    public func set(tenantID: String, sessionID: String, space: ProtectionSpace, user: String, password: String) async throws -> StoredCredential {
        guard let kind = try await kind(tenantID: tenantID, sessionID: sessionID) else { throw StoreError.notFound(resource: "session") }
        if kind == .ephemeral {
            let credential = StoredCredential(id: IDs.make("crd"), protectionSpace: space, user: user, password: password)
            ephemeral.set(credential, sessionID: sessionID)
            return credential
        }
        // `kind` found the session under this tenant; sessions are never deleted.
        // One statement: a DELETE then an INSERT let two requests for the same space both find
        // nothing to delete, and the second insert hit the unique index (a 500).
        return try await pool.withConnection { connection in
            let id = IDs.make("crd")
            try connection.execute(
                """
                INSERT INTO session_credentials (id, tenant_id, session_id, host, port, protocol, realm, authentication_method, user_name, password)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                ON CONFLICT (session_id, host, port, protocol, coalesce(realm, ''), authentication_method)
                -- A realm of "" and no realm are one protection space here: the one set last is kept
                -- whole, realm included, as the answer shows it.
                DO UPDATE SET id = EXCLUDED.id, realm = EXCLUDED.realm, user_name = EXCLUDED.user_name, password = EXCLUDED.password,
                              created_at = now()
                """,
                [id, tenantID, sessionID, space.host, space.port, space.protocol, space.realm, space.authenticationMethod.rawValue, user, password]
            )
            return StoredCredential(id: id, protectionSpace: space, user: user, password: password)
        }
    }

    public func list(tenantID: String, sessionID: String) async throws -> [StoredCredential] {
        guard let kind = try await kind(tenantID: tenantID, sessionID: sessionID) else { throw StoreError.notFound(resource: "session") }
        if kind == .ephemeral {
            return ephemeral.credentials(ofSession: sessionID)
        }
        return try await pool.withConnection { connection in
            try Self.credentials(ofSession: sessionID, on: connection)
        }
    }

    public func remove(tenantID: String, sessionID: String, credentialID: String) async throws {
        // Another tenant's session, or none: the credential is not found, as any unknown one.
        if try await kind(tenantID: tenantID, sessionID: sessionID) == .ephemeral {
            guard ephemeral.remove(credentialID: credentialID, sessionID: sessionID) else { throw StoreError.notFound(resource: "credential") }
            return
        }
        let removed = try await pool.withConnection { connection in
            try connection.execute(
                "DELETE FROM session_credentials WHERE tenant_id = $1 AND session_id = $2 AND id = $3", [tenantID, sessionID, credentialID]
            )
        }
        guard removed == 1 else { throw StoreError.notFound(resource: "credential") }
    }

    /// The tenant's session's kind; nil for another tenant's session or none.
    private func kind(tenantID: String, sessionID: String) async throws -> SessionKind? {
        try await pool.withConnection { connection in
            try connection.query("SELECT kind FROM sessions WHERE tenant_id = $1 AND id = $2", [tenantID, sessionID])
                .first.flatMap { SessionKind(rawValue: try $0.decode("kind", as: String.self)) }
        }
    }

    static func credentials(ofSession sessionID: String, on connection: PostgresConnection) throws -> [StoredCredential] {
        try connection.query(
            """
            SELECT id, host, port, protocol, realm, authentication_method, user_name, password
            FROM session_credentials WHERE session_id = $1 ORDER BY created_at
            """,
            [sessionID]
        ).map { row in
            StoredCredential(
                id: try row.decode("id"),
                protectionSpace: ProtectionSpace(
                    host: try row.decode("host"), port: try row.decode("port"), protocol: try row.decode("protocol"),
                    realm: try row.decode("realm"),
                    authenticationMethod: ProtectionSpace.AuthenticationMethod(rawValue: try row.decode("authentication_method")) ?? .default
                ),
                user: try row.decode("user_name"),
                password: try row.decode("password")
            )
        }
    }
}
