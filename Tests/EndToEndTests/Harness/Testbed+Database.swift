import FerryTestSupport
import Postgres

/// What the tests read straight from the database, as an operator would with psql: facts the
/// API does not show (who holds a lease, the last checkpoint, the raw event log).
extension Testbed {
    /// The instance holding the task's lease, nil when nobody holds it.
    func leaseOwner(of taskID: String) async throws -> String? {
        guard let database else { throw HarnessError("the embedded testbed has no database handle") }
        return try await database.database.pool.withConnection { connection in
            let rows = try connection.query("SELECT lease_owner FROM tasks WHERE id = $1", [taskID])
            guard let row = rows.first else { return nil }
            return try row.decode(0, as: String?.self)
        }
    }

    /// The bytes of the task's last checkpoint (what a successor resumes from), 0 without one.
    func checkpointedBytes(of taskID: String) async throws -> Int64 {
        guard let database else { throw HarnessError("the embedded testbed has no database handle") }
        return try await database.database.pool.withConnection { connection in
            let rows = try connection.query("SELECT coalesce((checkpoint->>'bytesOnDisk')::bigint, 0) FROM tasks WHERE id = $1", [taskID])
            return try rows.first?.decode(0, as: Int64.self) ?? 0
        }
    }

    /// The task's events in sequence order (the log that webhooks deliver).
    func events(of taskID: String) async throws -> [RecordedEvent] {
        guard let database else { throw HarnessError("the embedded testbed has no database handle") }
        return try await database.database.pool.withConnection { connection in
            try connection.query(
                "SELECT sequence, type, (data->>'fileOffset')::double precision FROM events WHERE task_id = $1 ORDER BY sequence",
                [taskID]
            ).map { row in
                RecordedEvent(sequence: try row.decode(0), type: try row.decode(1), fileOffset: try row.decode(2, as: Double?.self))
            }
        }
    }
}

/// One row of the task's event log, as the database holds it.
struct RecordedEvent: Sendable {
    var sequence: Int64
    var type: String
    var fileOffset: Double?
}
