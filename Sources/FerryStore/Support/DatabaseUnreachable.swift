import Postgres

extension FerryDatabase {
    /// Whether `error` is PostgreSQL out of reach (down, restarting, the connection lost, this
    /// process's pool closed) rather than a statement failing: a read may succeed shortly.
    public static func isUnreachable(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.isConnectionLoss || error.kind == .poolClosed
    }

    /// Whether `error` is PostgreSQL out of reach before the failing call sent any statement
    /// (connecting failed, the pool closed): that call did nothing, so a request it ended may
    /// be sent again. A connection lost during a statement (a COMMIT, perhaps) is not: what it
    /// did is unknown.
    public static func failedBeforeAnyStatement(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return (error.kind == .connection && error.query == nil) || error.kind == .poolClosed
    }
}

/// Whether the calls of a unit of work reached the database (see `ServerContact`): bound around
/// each API request, to tell whether a failure to connect left anything of it done.
public typealias DatabaseContact = ServerContact
