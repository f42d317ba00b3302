import FerryCore
import Foundation
import Postgres

extension WebhookLedger {
    /// Appends `session.didFinishEvents` (URLSessionDidFinishEventsForBackgroundURLSession) to
    /// each of these sessions that is a background session with a delegate, once no task of it
    /// is active, the fan-out has passed all its events, and every delivery of them is finished —
    /// once, until new events were delivered. Returns the sessions that got it.
    @discardableResult
    public func finishEventsIfDone(sessionIDs: [String]) async throws -> [String] {
        guard !sessionIDs.isEmpty else { return [] }
        // Most sessions are not background sessions with a delegate (a kind never changes): one
        // round trip says so, where the transaction below takes three (BEGIN and COMMIT).
        let backgroundSessions = try await pool.withConnection(commit: .readOnly) { connection in
            try connection.query(
                "SELECT id FROM sessions WHERE id = ANY($1) AND kind = 'background' AND delegate_endpoint_id IS NOT NULL",
                [sessionIDs]
            ).map { try $0.decode(0, as: String.self) }
        }
        guard !backgroundSessions.isEmpty else { return [] }
        return try await pool.withTransaction { connection in
            // Locked first, checked after: a concurrent check on another instance waits here and
            // then sees this one's event. (A delegate may have been removed meanwhile.)
            let candidates = try connection.query(
                "SELECT id FROM sessions WHERE id = ANY($1) AND delegate_endpoint_id IS NOT NULL ORDER BY id FOR UPDATE",
                [backgroundSessions]
            ).map { try $0.decode(0, as: String.self) }
            guard !candidates.isEmpty else { return [] }
            let done = try connection.query(
                """
                SELECT s.id, s.tenant_id FROM sessions s
                CROSS JOIN LATERAL (
                    SELECT max(e.position) AS last_position,
                           max(e.position) FILTER (WHERE e.type = 'session.didFinishEvents') AS last_finish
                    FROM events e WHERE e.session_id = s.id
                ) log
                WHERE s.id = ANY($1)
                  AND log.last_position IS NOT NULL
                  AND log.last_position <= (SELECT position FROM webhook_dispatch WHERE id = 1)
                  AND log.last_position IS DISTINCT FROM log.last_finish
                  AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.session_id = s.id AND t.state IN ('running', 'canceling'))
                  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.session_id = s.id AND d.status = 'pending')
                  AND EXISTS (SELECT 1 FROM webhook_deliveries d
                              WHERE d.session_id = s.id AND d.event_position > coalesce(log.last_finish, 0))
                """,
                [candidates]
            )
            var finished: [String] = []
            for row in done {
                let sessionID = try row.decode("id", as: String.self)
                try EventWriter.appendSessionEvent(
                    .sessionDidFinishEvents, tenantID: try row.decode("tenant_id"), sessionID: sessionID, data: [:], on: connection
                )
                finished.append(sessionID)
            }
            return finished
        }
    }
}
