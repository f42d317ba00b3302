import Postgres

extension PostgresPool {
    /// A transaction that is run again when PostgreSQL aborted it to break a deadlock or a
    /// serialization conflict: those transactions left nothing behind, and the store's closures
    /// only touch the database, so running them again is safe.
    func withRetriedTransaction<T: Sendable>(
        setUp: String? = nil, plans: StatementPlans = .chosenByServer, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        var attempt = 0
        while true {
            do {
                return try await withTransaction(setUp: setUp, plans: plans, body)
            } catch let error as PostgresError where error.isRetryableConflict && attempt < 3 {
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int64.random(in: 5...50) * Int64(attempt)))
            }
        }
    }
}

extension PostgresError {
    /// 40P01 deadlock_detected, 40001 serialization_failure.
    var isRetryableConflict: Bool {
        sqlState == "40P01" || sqlState == "40001"
    }
}
