import FerryCore
import Foundation
import Postgres

/// Which files on disk the database still refers to, for reconciling the data folder with the
/// task table after a crash (SAFETY.md: "On start-up reconcile `.part` files with the database").
public struct StorageReferences: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// The partial files among `names` that a task still needs: the partial of a download that
    /// has not completed, the file a checkpoint names (resume data keeps it after completion),
    /// or the partial of any task someone holds: a data task that its delegate turned into a
    /// download keeps its kind, and a transfer may go a long time without writing.
    public func referencedPartials(tenantID: String, names: [String]) async throws -> Set<String> {
        guard !names.isEmpty else { return [] }
        return try await pool.withConnection { connection in
            Set(try connection.query(
                """
                SELECT name FROM unnest($2::text[]) AS name
                WHERE EXISTS (SELECT 1 FROM tasks t WHERE t.tenant_id = $1 AND t.checkpoint->>'partialFile' = name)
                   OR EXISTS (SELECT 1 FROM tasks t WHERE t.tenant_id = $1 AND t.id = left(name, -5) AND name LIKE '%.part'
                              AND (t.kind = 'download' AND t.state <> 'completed' OR t.lease_owner IS NOT NULL))
                """,
                [tenantID, names]
            ).map { try $0.decode(0, as: String.self) })
        }
    }

    /// Which of these tasks of the tenant exist and have not ended.
    public func unfinishedTasks(tenantID: String, ids: [String]) async throws -> Set<String> {
        try await matchingIDs(of: ids, tenantID: tenantID, "SELECT id FROM tasks WHERE tenant_id = $1 AND id = ANY($2) AND state <> 'completed'")
    }

    /// Of `names` (files of the tenant's blobs folder), those a blob's row holds.
    public func existingBlobs(tenantID: String, names: [String]) async throws -> Set<String> {
        try await matchingIDs(of: names, tenantID: tenantID, "SELECT id FROM blobs WHERE tenant_id = $1 AND id = ANY($2)")
    }

    /// Of `names` (files of the tenant's cache folder), those a URL cache entry's body is. Read
    /// through the tenant's sessions: the cache's keys start with the session.
    public func cachedBodies(tenantID: String, names: [String]) async throws -> Set<String> {
        try await matchingIDs(of: names, tenantID: tenantID, """
            SELECT c.body_key FROM cache_entries c
            WHERE c.session_id IN (SELECT id FROM sessions WHERE tenant_id = $1) AND c.body_key = ANY($2)
            """)
    }

    /// The ids of `candidates` that `query` ($1 the tenant, $2 the candidates) answers.
    private func matchingIDs(of candidates: [String], tenantID: String, _ query: String) async throws -> Set<String> {
        guard !candidates.isEmpty else { return [] }
        return try await pool.withConnection { connection in
            Set(try connection.query(query, [tenantID, candidates]).map { try $0.decode(0, as: String.self) })
        }
    }

    /// What the database says about files of the downloads folder that no completed task owns.
    public enum DownloadFileFate: Sendable, Equatable {
        /// A completed download's file, or one whose task someone holds: keep it.
        case keep
        /// Renamed into place but never committed (a crash between the two), by an owner that
        /// holds the task no more: move it back to this partial file name so the task continues
        /// from it instead of starting over. While someone holds the task the file is kept: its
        /// completion may be waiting out a database outage, and whoever claims the task next
        /// takes the file back itself (`OpenedPartialFile`).
        case restore(partialName: String)
        /// Nobody's: remove it.
        case remove
    }

    public func fates(ofDownloads names: [String], tenantID: String) async throws -> [String: DownloadFileFate] {
        guard !names.isEmpty else { return [:] }
        return try await pool.withConnection { connection in
            let rows = try connection.query(
                """
                SELECT name, t.id IS NOT NULL AS task_exists,
                       (t.download_file = name OR t.lease_owner IS NOT NULL) AS owned,
                       coalesce(t.checkpoint->>'partialFile', t.id || '.part') AS partial_name,
                       (t.state <> 'completed' OR t.checkpoint IS NOT NULL) AS resumable
                FROM unnest($2::text[]) AS name
                LEFT JOIN tasks t ON t.tenant_id = $1 AND t.id = name AND (t.kind = 'download' OR t.lease_owner IS NOT NULL)
                """,
                [tenantID, names]
            )
            var fates: [String: DownloadFileFate] = [:]
            for row in rows {
                let name: String = try row.decode("name")
                if try row.decode("owned", as: Bool?.self) == true {
                    // A completed download's file, or one whose task someone holds.
                    fates[name] = .keep
                } else if try row.decode("task_exists", as: Bool.self), try row.decode("resumable", as: Bool?.self) == true,
                          let partial = try row.decode("partial_name", as: String?.self) {
                    fates[name] = .restore(partialName: partial)
                } else {
                    fates[name] = .remove
                }
            }
            return fates
        }
    }

    /// Resume data is honoured for `retention`; after that its partial file is released.
    /// Returns the (tenant, partial file) pairs to remove.
    public func expireResumeData(olderThan retention: Duration) async throws -> [(tenantID: String, partialFile: String)] {
        let seconds = Double(retention.components.seconds)
        return try await pool.withConnection { connection in
            try connection.query(
                """
                UPDATE tasks t SET checkpoint = NULL
                FROM (SELECT id, checkpoint->>'partialFile' AS partial FROM tasks
                      WHERE state = 'completed' AND checkpoint IS NOT NULL
                        AND completed_at < now() - make_interval(secs => $1)
                      FOR UPDATE SKIP LOCKED) old
                WHERE t.id = old.id
                RETURNING t.tenant_id, old.partial
                """,
                [seconds]
            ).map { (try $0.decode("tenant_id", as: String.self), try $0.decode("partial", as: String.self)) }
        }
    }
}
