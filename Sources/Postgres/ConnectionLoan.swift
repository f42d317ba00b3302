/// Hands a pool thread's connection to a caller blocked in `withConnectionBlocking` and back.
///
/// The pool thread waits in `lend` while the caller uses the connection, so exactly one thread
/// touches the connection at any time, and the lock's hand-over orders their memory accesses.
final class ConnectionLoan: Sendable {
    private enum State {
        case waiting
        case lent(PostgresConnection)
        case refused(PostgresError)
        case returned
    }

    private let state = ConditionLock(State.waiting)

    /// Pool thread: offers the connection and blocks until it is given back.
    func lend(_ connection: PostgresConnection) {
        state.withLockBroadcasting { $0 = .lent(connection) }
        state.wait { state -> Void? in
            if case .returned = state { return () }
            return nil
        }
    }

    /// Pool thread: no connection will come.
    func refuse(_ error: PostgresError) {
        state.withLockBroadcasting { $0 = .refused(error) }
    }

    /// Caller: blocks until a connection is lent or refused.
    func waitForConnection() throws -> PostgresConnection {
        let outcome = state.wait { state -> Result<PostgresConnection, PostgresError>? in
            switch state {
            case .lent(let connection): return .success(connection)
            case .refused(let error): return .failure(error)
            case .waiting, .returned: return nil
            }
        }
        return try outcome.get()
    }

    /// Caller: done with the connection.
    func giveBack() {
        state.withLockBroadcasting { $0 = .returned }
    }
}
