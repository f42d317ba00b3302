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
        try await entries([Lookup(sessionID: sessionID, key: key)])[0]
    }

    /// A key of a session's cache to look up.
    public struct Lookup: Sendable {
        public var sessionID: String
        public var key: String

        public init(sessionID: String, key: String) {
            self.sessionID = sessionID
            self.key = key
        }
    }

    /// The entries for the lookups, in their order (nil where there is none), each marked as
    /// used now; one statement for all of them.
    public func entries(_ lookups: [Lookup]) async throws -> [CachedResponse?] {
        guard !lookups.isEmpty else { return [] }
        let sessions = lookups.map(\.sessionID), keys = lookups.map(\.key)
        return try await pool.withConnection { connection in
            let rows = try connection.query(
                "SELECT ordinal, entry FROM cache_entries_use($1::text[], $2::text[])",
                [sessions, keys]
            )
            var found = [CachedResponse?](repeating: nil, count: keys.count)
            for row in rows {
                // An entry this version cannot read is a miss for its lookup alone, not a failure
                // of every lookup batched with it.
                found[Int(try row.decode("ordinal", as: Int64.self)) - 1] = try? row.decodeJSON("entry", as: CachedResponse.self)
            }
            return found
        }
    }

    /// A response to store under a key of a session's cache.
    public struct Put: Sendable {
        public var sessionID: String
        public var key: String
        public var entry: CachedResponse

        public init(sessionID: String, key: String, entry: CachedResponse) {
            self.sessionID = sessionID
            self.key = key
            self.entry = entry
        }
    }

    /// Stores entries (each replacing an older one under its key), then evicts least recently
    /// used entries until each session's cache fits in `capacity` bytes; in one transaction with
    /// a fixed number of statements, since many small downloads end together. Returns, for each
    /// put, the body keys of the entries it dropped (one it replaced; eviction's drops go to the
    /// first put of their session), for the caller to remove the files.
    public func put(_ puts: [Put], capacity: Int64) async throws -> [[String]] {
        guard !puts.isEmpty else { return [] }
        // The last put of a key wins; an earlier one in the batch only drops its own body.
        var dropped = Array(repeating: [String](), count: puts.count)
        var winner: [String: Int] = [:]
        for (index, put) in puts.enumerated() {
            let identity = put.sessionID + " " + put.key
            if let earlier = winner[identity] { dropped[earlier].append(puts[earlier].entry.bodyKey) }
            winner[identity] = index
        }
        // In (session, key) order: usage rows are locked, and entries upserted, in one order.
        let kept = winner.values.sorted { (puts[$0].sessionID, puts[$0].key) < (puts[$1].sessionID, puts[$1].key) }
        let sessions = kept.map { puts[$0].sessionID }
        let keys = kept.map { puts[$0].key }
        let entries = try kept.map { try JSONColumn.encode(puts[$0].entry).text }
        let firstOfSession = Dictionary(kept.map { (puts[$0].sessionID, $0) }) { first, _ in first }
        let replaced = try await pool.withRetriedTransaction(plans: .byKeyPlannedOnce) { connection in
            // First the sessions' cache_usage rows, in session order (made if new). Puts into a
            // session take turns from here on, before either touches an entry: two transfers of
            // the same URL ending together on different instances store one after the other, the
            // second replacing the first's entry and learning its body to remove, and one put's
            // eviction cannot wait on an entry another holds.
            try Self.lockUsage(ofSessions: sessions, on: connection)
            let replaced = try connection.query(
                """
                WITH new AS (
                    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[])
                        AS n(session_id, key, entry, body_key, body_size)
                ), old AS (
                    SELECT c.session_id, c.key, c.body_key FROM cache_entries c JOIN new n USING (session_id, key)
                ), stored AS (
                    INSERT INTO cache_entries (session_id, key, entry, body_key, body_size)
                    SELECT session_id, key, entry::jsonb, body_key, body_size FROM new
                    ON CONFLICT (session_id, key) DO UPDATE SET entry = EXCLUDED.entry, body_key = EXCLUDED.body_key,
                        body_size = EXCLUDED.body_size, last_used_at = now()
                )
                SELECT session_id, key, body_key FROM old
                """,
                [sessions, keys, entries, kept.map { puts[$0].entry.bodyKey }, kept.map { puts[$0].entry.bodySize }]
            ).map { (identity: try $0.decode("session_id", as: String.self) + " " + $0.decode("key", as: String.self), bodyKey: try $0.decode("body_key", as: String.self)) }
            // Eviction reads a session's entries only when the session is over its capacity
            // (cache_usage, which a trigger keeps, says so).
            let evicted = try connection.query(
                """
                WITH over AS (
                    SELECT session_id FROM cache_usage WHERE session_id = ANY($1) AND bytes > $2
                ), ranked AS (
                    SELECT session_id, key, sum(body_size) OVER (PARTITION BY session_id ORDER BY last_used_at DESC, key) AS running
                    FROM cache_entries WHERE session_id IN (SELECT session_id FROM over)
                )
                DELETE FROM cache_entries c USING ranked
                WHERE c.session_id = ranked.session_id AND c.key = ranked.key AND ranked.running > $2
                RETURNING c.session_id, c.body_key
                """,
                [Array(Set(sessions)), capacity]
            ).map { (sessionID: try $0.decode("session_id", as: String.self), bodyKey: try $0.decode("body_key", as: String.self)) }
            return (replaced, evicted)
        }
        for old in replaced.0 {
            if let index = winner[old.identity] { dropped[index].append(old.bodyKey) }
        }
        for old in replaced.1 {
            if let index = firstOfSession[old.sessionID] { dropped[index].append(old.bodyKey) }
        }
        return dropped
    }

    public func remove(sessionID: String, keys: [String]) async throws -> [String] {
        guard !keys.isEmpty else { return [] }
        return try await pool.withRetriedTransaction { connection in
            try Self.lockUsage(ofSession: sessionID, on: connection)
            return try connection.query(
                "DELETE FROM cache_entries WHERE session_id = $1 AND key = ANY($2) RETURNING body_key", [sessionID, keys]
            ).map { try $0.decode(0, as: String.self) }
        }
    }

    static func clear(sessionID: String, on connection: PostgresConnection) throws -> [String] {
        try lockUsage(ofSession: sessionID, on: connection)
        return try connection.query("DELETE FROM cache_entries WHERE session_id = $1 RETURNING body_key", [sessionID])
            .map { try $0.decode(0, as: String.self) }
    }

    /// Locks the sessions' cache_usage rows (making those missing), in session order, before the
    /// transaction touches their entries: whatever changes entries of a session (a put, a
    /// removal, clearing) takes its turn here, so none waits on an entry while holding the
    /// usage row another needs (the trigger updates it after each entry).
    private static func lockUsage(ofSessions sessionIDs: [String], on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO cache_usage AS u (session_id, bytes)
            SELECT DISTINCT s, 0 FROM unnest($1::text[]) AS s ORDER BY s
            ON CONFLICT (session_id) DO UPDATE SET bytes = u.bytes
            """,
            [sessionIDs]
        )
    }

    /// `lockUsage(ofSessions:)` for removing entries: a session without a usage row has none.
    private static func lockUsage(ofSession sessionID: String, on connection: PostgresConnection) throws {
        try connection.execute("SELECT 1 FROM cache_usage WHERE session_id = $1 FOR UPDATE", [sessionID])
    }
}
