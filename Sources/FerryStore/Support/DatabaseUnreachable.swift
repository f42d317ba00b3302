import Postgres

extension FerryDatabase {
    /// Whether `error` is PostgreSQL out of reach (down, restarting, the connection lost, this
    /// process's pool closed) rather than a statement failing: the same request may succeed
    /// shortly.
    public static func isUnreachable(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.isConnectionLoss || error.kind == .poolClosed
    }
}
