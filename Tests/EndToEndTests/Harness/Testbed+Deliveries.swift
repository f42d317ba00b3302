import FerryTestSupport
import Postgres

/// What the webhook tests read straight from the database: the events a delegate must receive,
/// and the deliveries still pending or leased, which the API shows only per session.
extension Testbed {
    /// The session's events of `types`, each of which its delegate must receive at least once.
    func events(ofSession sessionID: String, types: [String]) async throws -> [LoggedEvent] {
        guard let database else { throw HarnessError("the embedded testbed has no database handle") }
        return try await database.database.pool.withConnection { connection in
            try connection.query(
                "SELECT id, task_id, sequence FROM events WHERE session_id = $1 AND type = ANY($2::text[]) ORDER BY position",
                [sessionID, types]
            ).map { row in LoggedEvent(id: try row.decode(0), taskID: try row.decode(1), sequence: try row.decode(2)) }
        }
    }

    /// The session's deliveries not yet delivered (or given up).
    func pendingDeliveries(ofSession sessionID: String) async throws -> Int64 {
        guard let database else { throw HarnessError("the embedded testbed has no database handle") }
        return try await database.database.pool.withConnection { connection in
            try connection.query(
                "SELECT count(*) FROM webhook_deliveries WHERE session_id = $1 AND status = 'pending'", [sessionID]
            )[0].decode(0, as: Int64.self)
        }
    }

    /// Deliveries `instanceID` holds an unexpired lease on: being sent, or answered and not yet
    /// recorded. After a crash, these are the ones another instance sends again.
    func leasedDeliveries(by instanceID: String) async throws -> Int64 {
        guard let database else { throw HarnessError("the embedded testbed has no database handle") }
        return try await database.database.pool.withConnection { connection in
            try connection.query(
                "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND lease_owner = $1 AND lease_expires_at > now()",
                [instanceID]
            )[0].decode(0, as: Int64.self)
        }
    }
}

/// One row of the event log, as a delegate should receive it.
struct LoggedEvent: Sendable {
    var id: String
    var taskID: String?
    var sequence: Int64
}
