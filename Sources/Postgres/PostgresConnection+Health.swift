import CLibPQ
import Glibc

extension PostgresConnection {
    /// Whether an idle connection is still alive, without a round trip: when the server ended the
    /// session (restart, `pg_terminate_backend`) it sent an error and closed the socket, which
    /// shows as readable input. Reading it lets libpq notice the loss. Costs one `poll()`.
    func checkIdleHealth() -> Bool {
        for _ in 0..<4 {
            guard !isBroken else { return false }
            guard Self.isReadable(socket: PQsocket(rawHandle), timeoutMilliseconds: 0) else { return true }
            if PQconsumeInput(rawHandle) == 0 {
                markLost()
                return false
            }
            // Drop notifications that arrived on a pooled connection: nobody reads them here.
            while let notification = PQnotifies(rawHandle) { PQfreemem(notification) }
        }
        return !isBroken
    }

    /// `poll()` for input on a socket; a negative socket counts as readable so the caller asks
    /// libpq, which then reports the broken connection.
    static func isReadable(socket: Int32, timeoutMilliseconds: Int32) -> Bool {
        guard socket >= 0 else { return true }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeoutMilliseconds)
        return ready > 0
    }
}
