import FerryCore
import Foundation
import Postgres

extension SessionStore {
    /// `finishTasksAndInvalidate` (`.finishTasks`) and `invalidateAndCancel` (`.cancelTasks`):
    /// the session accepts no new task from now on; it becomes invalidated, with
    /// `session.didBecomeInvalidWithError`, once its last task has ended — at once if none is
    /// outstanding. `invalidateAndCancel` after `finishTasksAndInvalidate` cancels the tasks
    /// still outstanding, as URLSession's does; anything else called again changes nothing.
    public enum Invalidation: String, Sendable {
        case finishTasks = "finishing"
        case cancelTasks = "canceling"
    }

    public func invalidate(
        tenantID: String, sessionID: String, _ invalidation: Invalidation, resumeData: ResumeDataIssuer
    ) async throws -> SessionRecord {
        try await pool.withRetriedTransaction { connection in
            guard let found = try connection.query(
                "SELECT is_shared FROM sessions WHERE tenant_id = $1 AND id = $2", [tenantID, sessionID]
            ).first else {
                throw StoreError.notFound(resource: "session")
            }
            // URLSession ignores invalidating its shared session; Ferry says so rather than
            // answering as if it had happened.
            guard try !found.decode("is_shared", as: Bool.self) else {
                throw StoreError.conflict("The shared session cannot be invalidated, as URLSession.shared cannot; cancel its tasks instead.")
            }
            // Tasks before their session, the order in which a completing task locks them. Locked
            // for both kinds: a task completing meanwhile found the session still valid and did
            // not look further, so this waits for it and then sees it completed. Without the lock
            // each missed the other's write, and the session stayed `finishing` for good.
            try connection.execute(
                "SELECT 1 FROM tasks WHERE session_id = $1 AND state <> 'completed' ORDER BY id FOR UPDATE", [sessionID]
            )
            let row = try connection.query("SELECT state FROM sessions WHERE id = $1 FOR UPDATE", [sessionID]).firstRow()
            let state = try row.decode("state", as: String.self)
            if state == SessionState.valid.rawValue || state == SessionState.finishing.rawValue && invalidation == .cancelTasks {
                try connection.execute("UPDATE sessions SET state = $2 WHERE id = $1", [sessionID, invalidation.rawValue])
                if invalidation == .cancelTasks {
                    let outstanding = try connection.query(
                        "SELECT id FROM tasks WHERE session_id = $1 AND state <> 'completed' ORDER BY task_identifier", [sessionID]
                    ).map { try $0.decode(0, as: String.self) }
                    for taskID in outstanding {
                        _ = try TaskStore.apply(.cancel, tenantID: tenantID, taskID: taskID, resumeData: resumeData, on: connection)
                    }
                }
                var noTaskEvents = EventBatch()  // the cancelled tasks' events are written already
                try SessionInvalidation.finishIfLastTasks(ofSessions: [sessionID], events: &noTaskEvents, on: connection)
            }
            return try Self.decode(try connection.query("SELECT \(Self.columns) FROM sessions WHERE id = $1", [sessionID]).firstRow())
        }
    }

    /// `reset`: forgets what the session stored. Returns the names of the downloaded and partial
    /// files to remove, and clears the task rows' references to them (so nothing serves a file
    /// that is being deleted); the completed tasks remember that their body or file was removed
    /// (410). Transfers under way keep running, as in URLSession, but the instances running them
    /// hear it (`sessionReset`) and their next exchanges go without the emptied cookies and
    /// credentials, on new connections (see `renewConnections`).
    ///
    /// The session's row is locked FOR NO KEY UPDATE, which the key-share locks of rows that
    /// refer to it (a cache entry being stored) do not wait for, and the whole is run again if
    /// PostgreSQL breaks a deadlock with it: a reset answered 500 when a cache put met it.
    public func reset(tenantID: String, sessionID: String) async throws -> (downloads: [String], partials: [String], cacheBodies: [String]) {
        try await pool.withRetriedTransaction { connection in
            guard try !connection.query(
                "SELECT 1 FROM sessions WHERE tenant_id = $1 AND id = $2 FOR NO KEY UPDATE", [tenantID, sessionID]
            ).isEmpty else { throw StoreError.notFound(resource: "session") }
            let downloads = try connection.query(
                """
                UPDATE tasks t SET download_file = NULL FROM (
                    SELECT id, download_file FROM tasks WHERE session_id = $1 AND download_file IS NOT NULL FOR UPDATE
                ) old WHERE t.id = old.id RETURNING old.download_file
                """,
                [sessionID]
            ).map { try $0.decode(0, as: String.self) }
            let partials = try connection.query(
                """
                UPDATE tasks t SET checkpoint = NULL FROM (
                    SELECT id, checkpoint->>'partialFile' AS partial FROM tasks
                    WHERE session_id = $1 AND state = 'completed' AND checkpoint IS NOT NULL FOR UPDATE
                ) old WHERE t.id = old.id RETURNING old.partial
                """,
                [sessionID]
            ).map { try $0.decode(0, as: String.self) }
            try connection.execute("UPDATE task_bodies SET response_body = NULL WHERE task_id IN (SELECT id FROM tasks WHERE session_id = $1)", [sessionID])
            try connection.execute(
                "UPDATE tasks SET storage_removed_at = now() WHERE session_id = $1 AND state = 'completed'",
                [sessionID]
            )
            try connection.execute("DELETE FROM session_credentials WHERE session_id = $1", [sessionID])
            try connection.execute("DELETE FROM session_cookies WHERE session_id = $1", [sessionID])
            try Self.renewConnections(ofSession: sessionID, notifying: NotificationChannel.sessionReset, on: connection)
            return (downloads, partials, try CacheStore.clear(sessionID: sessionID, on: connection))
        }
    }
}

extension SessionStore {
    /// `flush`: what the session holds only in memory is made durable and its next requests use
    /// new connections. Cookies, credentials and the cache of default and background sessions
    /// are written through as they change; what is left is in the instances running its
    /// transfers, which hear it (`sessionFlush`): they checkpoint the session's downloads at
    /// their next heartbeat and renew its connections.
    /// Locked and run again as `reset` is.
    public func flush(tenantID: String, sessionID: String) async throws -> SessionRecord {
        try await pool.withRetriedTransaction { connection in
            guard try !connection.query(
                "SELECT 1 FROM sessions WHERE tenant_id = $1 AND id = $2 FOR NO KEY UPDATE", [tenantID, sessionID]
            ).isEmpty else { throw StoreError.notFound(resource: "session") }
            try Self.renewConnections(ofSession: sessionID, notifying: NotificationChannel.sessionFlush, on: connection)
            return try Self.decode(try connection.query("SELECT \(Self.columns) FROM sessions WHERE id = $1", [sessionID]).firstRow())
        }
    }

    /// A new connection generation: no transfer of the session started (or exchange begun) from
    /// now on reuses a connection opened before. Notifies `channel` with "<session id> <generation>".
    static func renewConnections(ofSession sessionID: String, notifying channel: String, on connection: PostgresConnection) throws {
        let generation = try connection.query(
            """
            UPDATE sessions SET connection_generation = connection_generation + 1, connections_renewed_at = now()
            WHERE id = $1 RETURNING connection_generation
            """,
            [sessionID]
        ).firstRow().decode(0, as: Int64.self)
        try connection.execute("SELECT pg_notify($1, $2)", [channel, SessionRenewal.payload(sessionID: sessionID, generation: generation)])
    }
}
