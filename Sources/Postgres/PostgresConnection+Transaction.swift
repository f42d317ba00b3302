extension PostgresConnection {
    /// Runs `body` inside BEGIN … COMMIT, and ROLLBACK when it throws.
    ///
    /// If `body` caught a statement error and carried on, the transaction is aborted and COMMIT
    /// would silently roll back: that throws instead. A lost connection throws kind `.connection`.
    @discardableResult
    public func withTransaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try execute("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            rollBackAfterFailure()
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
