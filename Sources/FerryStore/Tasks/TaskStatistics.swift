import FerryCore
import Postgres

/// Counts for operators: tasks by state and kind, and the runnable tasks nobody holds yet.
public struct TaskStatistics: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    public struct Counts: Sendable {
        public var byStateAndKind: [TaskState: [TaskKind: Int]] = [:]
        public var queueDepth = 0
    }

    public func counts() async throws -> Counts {
        try await pool.withConnection { connection in
            var counts = Counts()
            for row in try connection.query("SELECT state, kind, count(*) FROM tasks GROUP BY state, kind") {
                guard let state = TaskState(rawValue: try row.decode(0)), let kind = TaskKind(rawValue: try row.decode(1)) else { continue }
                counts.byStateAndKind[state, default: [:]][kind] = try row.decode(2, as: Int.self)
            }
            counts.queueDepth = try connection.query(
                "SELECT count(*) FROM tasks WHERE state = 'running' AND lease_owner IS NULL"
            ).firstRow().decode(0, as: Int.self)
            return counts
        }
    }
}
