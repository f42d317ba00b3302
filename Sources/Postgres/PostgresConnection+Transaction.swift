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

    /// Runs `body` inside a savepoint of the current transaction. When it throws, only its own
    /// work is undone and the transaction can go on; the error is rethrown for the caller.
    @discardableResult
    public func withSavepoint<T>(_ name: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        try execute("SAVEPOINT \(name)")
        do {
            let value = try body(self)
            try execute("RELEASE SAVEPOINT \(name)")
            return value
        } catch {
            if !isBroken { try execute("ROLLBACK TO SAVEPOINT \(name)") }
            throw error
        }
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
