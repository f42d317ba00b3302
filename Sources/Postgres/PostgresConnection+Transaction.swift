extension PostgresConnection {
    /// Runs `body` inside BEGIN … COMMIT, and ROLLBACK when it throws.
    ///
    /// If `body` caught a statement error and carried on, the transaction is aborted and COMMIT
    /// would silently roll back: that throws instead. A lost connection throws kind `.connection`.
    ///
    /// `setUp`, a statement without parameters (such as `SELECT set_config(…, true)`), is sent
    /// with BEGIN in one round trip, and runs before `body`.
    @discardableResult
    public func withTransaction<T>(setUp: String? = nil, _ body: (PostgresConnection) throws -> T) throws -> T {
        let value: T
        do {
            if let setUp {
                try executeScript("BEGIN; " + setUp)
            } else {
                try execute("BEGIN")
            }
            value = try body(self)
        } catch {
            if isInTransaction { rollBackAfterFailure() }
            throw error
        }
        if isInFailedTransaction {
            rollBackAfterFailure()
            throw PostgresError(kind: .query, message: "a statement in the transaction failed (its error was caught), so the transaction was rolled back")
        }
        try execute("COMMIT")
        return value
    }

    private func rollBackAfterFailure() {
        guard !isBroken else { return }
        do {
            try execute("ROLLBACK")
        } catch {
            // The session is in an unknown state; make sure nobody uses it again.
            markLost()
        }
    }
}
