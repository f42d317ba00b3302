import FerryCore
import Foundation
import Postgres

/// The persistent URL cache of default and background sessions: entries here, bodies in the
/// tenant's cache folder. Every method that drops entries returns their body keys, for the
/// caller to remove the files.
public struct CacheStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// The entry for `key`, marked as used now (for least-recently-used eviction).
    public func entry(sessionID: String, key: String) async throws -> CachedResponse? {
        try await pool.withConnection { connection in
            try connection.query(
                "UPDATE cache_entries SET last_used_at = now() WHERE session_id = $1 AND key = $2 RETURNING entry",
                [sessionID, key]
            ).first?.decodeJSON("entry", as: CachedResponse.self)
        }
    }

    /// Stores `entry` under `key` (replacing an older one), then evicts least recently used
    /// entries until the session's cache fits in `capacity` bytes.
    public func put(sessionID: String, key: String, entry: CachedResponse, capacity: Int64) async throws -> [String] {
        try await pool.withRetriedTransaction { connection in
            // Two transfers of the same URL may end together: one at a time per key, so the
            // second replaces the first's entry (and learns its body to remove) instead of
            // colliding with it on the primary key.
            try connection.execute("SELECT pg_advisory_xact_lock(hashtextextended($1 || ' ' || $2, 0))", [sessionID, key])
            var dropped = try connection.query(
                "DELETE FROM cache_entries WHERE session_id = $1 AND key = $2 RETURNING body_key", [sessionID, key]
            ).map { try $0.decode(0, as: String.self) }
            try connection.execute(
                "INSERT INTO cache_entries (session_id, key, entry, body_key, body_size) VALUES ($1, $2, $3, $4, $5)",
                [sessionID, key, try JSONColumn.encode(entry), entry.bodyKey, entry.bodySize]
            )
            dropped += try connection.query(
                """
                DELETE FROM cache_entries c USING (
                    SELECT key, sum(body_size) OVER (ORDER BY last_used_at DESC, key) AS running
                    FROM cache_entries WHERE session_id = $1
                ) ranked
                WHERE c.session_id = $1 AND c.key = ranked.key AND ranked.running > $2
                RETURNING c.body_key
                """,
                [sessionID, capacity]
            ).map { try $0.decode(0, as: String.self) }
            return dropped
        }
    }

    public func remove(sessionID: String, keys: [String]) async throws -> [String] {
        guard !keys.isEmpty else { return [] }
        return try await pool.withConnection { connection in
            try connection.query(
                "DELETE FROM cache_entries WHERE session_id = $1 AND key = ANY($2) RETURNING body_key", [sessionID, keys]
            ).map { try $0.decode(0, as: String.self) }
        }
    }

    static func clear(sessionID: String, on connection: PostgresConnection) throws -> [String] {
        try connection.query("DELETE FROM cache_entries WHERE session_id = $1 RETURNING body_key", [sessionID])
            .map { try $0.decode(0, as: String.self) }
    }
}
