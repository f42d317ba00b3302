import CLibPQ

/// The one place where libpq's failures (a PGresult in error, a PGconn in trouble) become
/// `PostgresError`s.
extension PostgresError {
    /// An error reported in a result (`PGRES_FATAL_ERROR`, …), or — when libpq could not even
    /// build a result — the connection's error message. A result error on a connection that is
    /// now `CONNECTION_BAD`, or with a connection-loss SQLSTATE, is of kind `.connection`.
    init(result: OpaquePointer?, connection: OpaquePointer, query: String?) {
        let connectionIsBad = PQstatus(connection) != CONNECTION_OK
        guard let result else {
            self.init(kind: connectionIsBad ? .connection : .query,
                      message: Self.connectionMessage(connection), query: query)
            return
        }
        let sqlState = Self.field(result, "C")
        var message = Self.field(result, "M") ?? ""
        if message.isEmpty {
            message = Self.trimmed(PQresultErrorMessage(result))
        }
        if message.isEmpty {
            message = Self.connectionMessage(connection)
        }
        let isLoss = connectionIsBad || Self.isConnectionLossState(sqlState)
        self.init(
            kind: isLoss ? .connection : .query,
            message: message,
            sqlState: sqlState,
            detail: Self.field(result, "D"),
            hint: Self.field(result, "H"),
            constraint: Self.field(result, "n"),
            query: query
        )
    }

    /// A failure of the connection itself: connecting, sending, reading.
    init(connection: OpaquePointer, query: String? = nil) {
        self.init(kind: .connection, message: Self.connectionMessage(connection), query: query)
    }

    /// libpq's current message for the connection, without its trailing newline.
    static func connectionMessage(_ connection: OpaquePointer) -> String {
        let message = trimmed(PQerrorMessage(connection))
        return message.isEmpty ? "connection to the server failed" : message
    }

    /// One diagnostic field of an error result; the codes are the `PG_DIAG_*` letters.
    private static func field(_ result: OpaquePointer, _ code: Unicode.Scalar) -> String? {
        guard let pointer = PQresultErrorField(result, Int32(code.value)) else { return nil }
        return String(cString: pointer)
    }

    private static func trimmed(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        var text = String(cString: pointer)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}
