/// Every failure of this module: libpq connection and query failures, row decoding, a closed pool.
///
/// `description` is what ends up in logs and, through careless callers, in HTTP responses, so it
/// never carries data: no bound parameter values, no `detail` (which quotes key values, e.g.
/// `Key (email)=(…) already exists`), and no server message for the SQLSTATE classes whose messages
/// may quote a value (`invalid input syntax for type integer: "…"`). Everything is kept in
/// `debugDescription` for a developer who needs it.
public struct PostgresError: Error, CustomStringConvertible, CustomDebugStringConvertible, Sendable {
    public enum Kind: Sendable, Hashable {
        /// The connection could not be opened, or was lost (server restart, terminated backend);
        /// also the embedded cluster could not be set up or started (the message says what to do).
        case connection
        /// The server rejected a statement, or the statement could not be sent as asked.
        case query
        /// A row value could not be turned into the requested Swift type.
        case decoding
        /// The pool was closed before the work could be handed to a connection.
        case poolClosed
    }

    public var kind: Kind
    /// The five-character SQLSTATE, e.g. "23505"; nil for errors raised on this side.
    public var sqlState: String?
    /// The server's primary message, or this module's own. May quote values: see `description`.
    public var message: String
    public var detail: String?
    public var hint: String?
    public var constraint: String?
    /// The statement that failed (SQL text only, never parameter values); shown in `debugDescription`.
    public var query: String?

    public init(
        kind: Kind,
        message: String,
        sqlState: String? = nil,
        detail: String? = nil,
        hint: String? = nil,
        constraint: String? = nil,
        query: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.query = query
    }

    /// `unique_violation`: an INSERT or UPDATE hit a unique index, e.g. a duplicate idempotency key.
    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// The connection is gone: whatever runs next needs a new connection, and work in flight
    /// (an open transaction) is lost.
    public var isConnectionLoss: Bool {
        kind == .connection || Self.isConnectionLossState(sqlState)
    }

    /// The server refused the statement for what it says or carries (SQLSTATE class 22 data
    /// exception, 23 integrity constraint violation, 42 syntax error or access rule violation),
    /// or its result could not be read: sent again, the same statement fails again. A lost
    /// connection, a deadlock, a full disk or a shutdown may pass.
    public var isRefusalOfTheStatement: Bool {
        switch kind {
        case .decoding: true
        case .query: sqlState.map { ["22", "23", "42"].contains($0.prefix(2)) } ?? false
        case .connection, .poolClosed: false
        }
    }

    /// Whether a write that failed with `error` would fail again, for the writers that retry:
    /// the server refused what it says or carries, or it could not even be built (encoding a
    /// value threw). A cancellation is not a refusal.
    public static func refusesAgain(_ error: any Error) -> Bool {
        if let error = error as? PostgresError { return error.isRefusalOfTheStatement }
        return !(error is CancellationError)
    }

    /// SQLSTATE class 08 (connection exception) and `admin_shutdown`, `crash_shutdown`,
    /// `cannot_connect_now`: the server ended or refuses the session.
    static func isConnectionLossState(_ sqlState: String?) -> Bool {
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03"
    }

    /// SQLSTATE classes whose server messages name objects, constraints and SQL tokens but never
    /// quote a data value. Any other class (22 data exception, P0 raise_exception, XX internal, …)
    /// may echo a bound value, so its message stays out of `description`.
    private static let classesWithValueFreeMessages: Set<Substring> = [
        "08", "0A", "23", "25", "28", "3D", "3F", "40", "42", "53", "54", "55", "57", "58",
    ]

    private var isMessageSafeToShow: Bool {
        switch kind {
        case .connection, .poolClosed, .decoding:
            return true
        case .query:
            guard let sqlState else { return true }  // our own message, written without values
            return Self.classesWithValueFreeMessages.contains(sqlState.prefix(2))
        }
    }

    public var description: String {
        var text: String
        switch kind {
        case .connection: text = "PostgreSQL connection error"
        case .query: text = "PostgreSQL query error"
        case .decoding: text = "PostgreSQL decoding error"
        case .poolClosed: text = "PostgreSQL pool closed"
        }
        var facts: [String] = []
        if let sqlState { facts.append("SQLSTATE \(sqlState)") }
        if let constraint { facts.append("constraint \"\(constraint)\"") }
        if !facts.isEmpty { text += " (" + facts.joined(separator: ", ") + ")" }
        if isMessageSafeToShow {
            text += ": " + message
        } else {
            text += ": server message withheld because it may quote a parameter value (see debugDescription)"
        }
        return text
    }

    public var debugDescription: String {
        var parts = ["kind: \(kind)"]
        if let sqlState { parts.append("sqlState: \(sqlState)") }
        parts.append("message: \(message)")
        if let detail { parts.append("detail: \(detail)") }
        if let hint { parts.append("hint: \(hint)") }
        if let constraint { parts.append("constraint: \(constraint)") }
        if let query { parts.append("query: \(query)") }
        return "PostgresError(" + parts.joined(separator: ", ") + ")"
    }
}

extension PostgresError {
    static func decoding(_ message: String, detail: String? = nil) -> PostgresError {
        PostgresError(kind: .decoding, message: message, detail: detail)
    }

    static let poolClosed = PostgresError(kind: .poolClosed, message: "the connection pool is closed")
}
