import FerryCore
import Foundation
import Postgres

/// The persistent cookie storage of default and background sessions.
public struct CookieStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Applies responses' `Set-Cookie` fields to their sessions' jars, each under its row lock.
    public func apply(_ updates: [CookieUpdate]) async throws {
        guard !updates.isEmpty else { return }
        try await pool.withRetriedTransaction { connection in
            for (sessionID, sessionUpdates) in Dictionary(grouping: updates, by: \.sessionID).sorted(by: { $0.key < $1.key }) {
                guard let row = try connection.query("SELECT configuration FROM sessions WHERE id = $1", [sessionID]).first else { continue }
                let handling = CookieHandling(configuration: try row.decodeJSON("configuration", as: SessionConfiguration.self))
                // One statement makes the row if needed, locks it and reads it. An insert that did
                // nothing, then a SELECT … FOR UPDATE, found no row when the session's `reset`
                // deleted it in between, and reading row 0 of none crashed the process.
                guard let stored = try connection.query(
                    """
                    INSERT INTO session_cookies AS c (session_id, jar) VALUES ($1, $2)
                    ON CONFLICT (session_id) DO UPDATE SET jar = c.jar
                    RETURNING c.jar
                    """,
                    [sessionID, try JSONColumn.encode(CookieJar())]
                ).first else { continue }
                var jar = try stored.decodeJSON("jar", as: CookieJar.self)
                for update in sessionUpdates { jar.apply(update, handling: handling) }
                try connection.execute(
                    "UPDATE session_cookies SET jar = $2, updated_at = now() WHERE session_id = $1", [sessionID, try JSONColumn.encode(jar)]
                )
            }
        }
    }

    public func jar(ofSession sessionID: String) async throws -> CookieJar {
        try await pool.withConnection { connection in try Self.jar(ofSession: sessionID, on: connection) }
    }

    static func jar(ofSession sessionID: String, on connection: PostgresConnection) throws -> CookieJar {
        try connection.query("SELECT jar FROM session_cookies WHERE session_id = $1", [sessionID]).first?
            .decodeJSON("jar", as: CookieJar.self) ?? CookieJar()
    }
}
