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
                try connection.execute(
                    "INSERT INTO session_cookies (session_id, jar) VALUES ($1, $2) ON CONFLICT (session_id) DO NOTHING",
                    [sessionID, try JSONColumn.encode(CookieJar())]
                )
                var jar = try connection.query("SELECT jar FROM session_cookies WHERE session_id = $1 FOR UPDATE", [sessionID])[0]
                    .decodeJSON("jar", as: CookieJar.self)
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
