import FerryStore

/// How many rows every table holds (but the installation's settings and the instance registry,
/// which change on their own), and the sum of the per-session task counters, which task creation
/// bumps. A rejected request that wrote anything at all — in any table, present or future — shows.
struct RowCounts: Equatable, Sendable, CustomStringConvertible {
    var rows: [String: Int64]
    var taskIdentifiersIssued: Int64

    var tenants: Int64 { rows["tenants"] ?? 0 }
    var tasks: Int64 { rows["tasks"] ?? 0 }
    var events: Int64 { rows["events"] ?? 0 }

    var description: String {
        rows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            + ", task identifiers \(taskIdentifiersIssued)"
    }

    static func read(_ database: FerryDatabase) async throws -> RowCounts {
        try await database.pool.withConnection { connection in
            // The table names come from the catalog and are quoted by format(%I); nothing of a test reaches them.
            let counts = try connection.query(
                """
                SELECT table_name::text AS name,
                       (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I.%I', table_schema, table_name),
                                                            false, true, '')))[1]::text::bigint AS count
                FROM information_schema.tables
                WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT IN ('settings', 'instances')
                """
            )
            var rows: [String: Int64] = [:]
            for row in counts {
                rows[try row.decode("name", as: String.self)] = try row.decode("count", as: Int64.self)
            }
            let issued = try connection.query("SELECT coalesce(sum(next_task_identifier), 0)::bigint FROM sessions")[0]
            return RowCounts(rows: rows, taskIdentifiersIssued: try issued.decode(0, as: Int64.self))
        }
    }
}
