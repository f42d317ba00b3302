import Postgres

/// A list's WHERE clause made of only the conditions a request asks for, with their parameters.
///
/// Written as `($2::text IS NULL OR d.task_id = $2)`, an optional condition is one statement for
/// every request, and once PostgreSQL plans it generically (which it may do after five executions
/// on a connection) no index serves the condition: a later page read every row before its
/// cursor, and a list filtered by task every delivery of the tenant (130–160 ms a page with
/// 300,000 of them, against under a millisecond as a condition of its own). Each combination of
/// conditions is a statement of its own instead, planned for what it asks.
struct ListConditions {
    private(set) var parameters: [any PostgresBindable] = []
    private var conditions: [String] = []

    /// Binds `value`; returns its placeholder (`$n`).
    mutating func bind(_ value: any PostgresBindable) -> String {
        parameters.append(value)
        return "$\(parameters.count)"
    }

    /// A condition every row of the list meets.
    mutating func require(_ condition: String) {
        conditions.append(condition)
    }

    /// `condition` with `value`'s placeholder, only when `value` is given.
    mutating func filter<Value: PostgresBindable>(_ value: Value?, _ condition: (String) -> String) {
        guard let value else { return }
        conditions.append(condition(bind(value)))
    }

    /// `WHERE` and the conditions; empty when there are none.
    var whereClause: String {
        conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    }
}
