import CLibPQ
import Glibc

/// One libpq connection. It blocks the calling thread, so it belongs on a dedicated thread (the
/// pool's, the listener's, or a thread of the caller's own), and it is confined to one thread at
/// a time: deliberately not Sendable.
///
/// At connect the session is pinned to what the decoders expect: `TimeZone=UTC`,
/// `DateStyle=ISO, MDY`, `bytea_output=hex`; and JIT compilation is off (`jit=off`): it pays only
/// for long queries, and its threshold is a plan's estimated cost, which a plan made without
/// sequential scans (`StatementPlans.byKeyPlannedOnce`) exceeds by far whenever one is
/// unavoidable. Reading the events' sequence so, each read compiled for 68 ms.
public final class PostgresConnection {
    private let handle: OpaquePointer
    private var isClosed = false
    /// Set when a statement failed with a connection-loss error while libpq still said OK.
    private var hasLostConnection = false
    /// The statements this connection has prepared, by text and parameter types. Parsing and
    /// planning are most of what the server spends on short statements, and the same few dozen
    /// run over and over; a statement prepared once is only bound and executed after that.
    private var prepared: [PreparedStatementKey: String] = [:]
    /// Names are never reused: a statement dropped from `prepared` stays prepared on the server.
    private var preparedNamesIssued = 0
    /// Beyond this many (text built at run time, say) statements run unprepared.
    static let maximumPreparedStatements = 256
    /// The session's `synchronous_commit` is `off` (see `prepareSession`); false: the server's default.
    var commitsAsynchronously = false
    /// The session plans `StatementPlans.byKeyPlannedOnce`; false: as the server's settings say.
    var plansByKey = false

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        if !isClosed { PQfinish(handle) }
    }

    public static func connect(_ conninfo: String) throws -> PostgresConnection {
        try connect(conninfo, applicationName: nil)
    }

    /// `conninfo` is a libpq connection string (`host=… dbname=…`) or URI (`postgresql://…`).
    /// `applicationName`, when given, overrides one in `conninfo`. Unless `conninfo` says otherwise
    /// the connection attempt gives up after 10 seconds.
    public static func connect(_ conninfo: String, applicationName: String?) throws -> PostgresConnection {
        // Later keywords override earlier ones, and "dbname" is expanded in place: so the default
        // timeout goes before the caller's conninfo and the application name after it.
        var keywords = ["connect_timeout", "dbname"]
        var values = ["10", conninfo]
        if let applicationName {
            keywords.append("application_name")
            values.append(applicationName)
        }
        let handle = withCStringArray(keywords) { keywordPointers in
            withCStringArray(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let handle else {
            throw PostgresError(kind: .connection, message: "libpq could not allocate a connection")
        }
        let connection = PostgresConnection(handle: handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(connection: handle)
        }
        // Notices (NOTICE: … skipping) would otherwise be printed on stderr. A FATAL one is the
        // server ending an idle session (terminated backend, shutdown): the connection is lost even
        // while the socket has not closed yet. The receiver is removed with the PGconn, which
        // never outlives this object, so the unretained reference is safe.
        PQsetNoticeReceiver(handle, { context, notice in
            guard let context, let notice, let severity = PQresultErrorField(notice, Int32(UInt8(ascii: "V"))) else { return }
            let level = String(cString: severity)
            if level == "FATAL" || level == "PANIC" {
                Unmanaged<PostgresConnection>.fromOpaque(context).takeUnretainedValue().markLost()
            }
        }, Unmanaged.passUnretained(connection).toOpaque())
        try connection.executeScript("SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, MDY'; SET bytea_output TO 'hex'; SET jit TO off")
        return connection
    }

    /// Runs one statement and returns its rows (empty for commands).
    public func query(_ sql: String, _ parameters: [any PostgresBindable] = []) throws -> PostgresRows {
        let result = try execute(sql: sql, parameters: parameters)
        defer { PQclear(result) }
        return PostgresRows(copying: result)
    }

    /// Runs one statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [any PostgresBindable] = []) throws -> Int {
        let result = try execute(sql: sql, parameters: parameters)
        defer { PQclear(result) }
        return PostgresRows.affectedRows(result)
    }

    /// Runs several `;`-separated statements without parameters (migrations, session setup).
    /// Without an explicit transaction in the script they run in one implicit transaction.
    public func executeScript(_ sql: String) throws {
        try checkUsable(sql)
        let result = try checked(PQexec(handle, sql), sql: sql)
        PQclear(result)
    }

    /// The connection cannot be used any more: closed, or lost (libpq's `CONNECTION_BAD`, or a
    /// statement failed with a connection-loss error). Open a new one.
    public var isBroken: Bool {
        isClosed || hasLostConnection || PQstatus(handle) != CONNECTION_OK
    }

    /// The server process serving this connection (`pg_backend_pid()`).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// The connection is inside a transaction block (including one aborted by an error).
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// The connection is inside a transaction block that an error has aborted: every statement but
    /// ROLLBACK will fail, and COMMIT would roll back.
    public var isInFailedTransaction: Bool {
        PQtransactionStatus(handle) == PQTRANS_INERROR
    }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        PQfinish(handle)
    }

    // MARK: - Inside this module

    /// libpq's handle, for the health check and the listener's socket loop.
    var rawHandle: OpaquePointer { handle }

    func markLost() {
        hasLostConnection = true
    }

    private func execute(sql: String, parameters: [any PostgresBindable]) throws -> OpaquePointer {
        try checkUsable(sql)
        if parameters.isEmpty {
            return try checked(PQexecParams(handle, sql, 0, nil, nil, nil, nil, 0), sql: sql)
        }
        return try PostgresParameters.withEncoded(parameters) { count, types, values, lengths, formats in
            let key = PreparedStatementKey(sql: sql, types: Array(UnsafeBufferPointer(start: types, count: Int(count))))
            guard let name = try preparedName(for: key, count: count, types: types) else {
                return try checked(PQexecParams(handle, sql, count, types, values, lengths, formats, 0), sql: sql)
            }
            do {
                return try checked(PQexecPrepared(handle, name, count, values, lengths, formats, 0), sql: sql)
            } catch let error as PostgresError where error.sqlState == "0A000" {
                // "cached plan must not change result type": a migration changed a table under
                // it. Prepared again on the next use.
                prepared[key] = nil
                throw error
            }
        }
    }

    /// The name `key` is prepared under, preparing it first; nil when the cache is full.
    private func preparedName(for key: PreparedStatementKey, count: Int32, types: UnsafePointer<Oid>?) throws -> String? {
        if let name = prepared[key] { return name }
        guard preparedNamesIssued < Self.maximumPreparedStatements else { return nil }
        let name = "ferry_\(preparedNamesIssued + 1)"
        PQclear(try checked(PQprepare(handle, name, key.sql, count, types), sql: key.sql))
        // A statement that fails to prepare takes no slot.
        preparedNamesIssued += 1
        prepared[key] = name
        return name
    }

    private func checkUsable(_ sql: String) throws {
        if isClosed {
            throw PostgresError(kind: .connection, message: "the connection is closed", query: sql)
        }
        if isBroken {
            throw PostgresError(kind: .connection, message: "the connection to the server was lost", query: sql)
        }
    }

    /// Passes a successful result through; turns anything else into a thrown `PostgresError`.
    private func checked(_ result: OpaquePointer?, sql: String) throws -> OpaquePointer {
        if let result {
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
                return result
            }
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                PQclear(result)
                // libpq is now in COPY mode and cannot run anything else: retire the connection.
                hasLostConnection = true
                throw PostgresError(kind: .query, message: "COPY is not supported by this connection API", query: sql)
            }
        }
        let error = PostgresError(result: result, connection: handle, query: sql)
        if let result { PQclear(result) }
        if error.isConnectionLoss { hasLostConnection = true }
        throw error
    }
}

@available(*, unavailable, message: "a PostgresConnection is confined to one thread; use PostgresPool to share connections")
extension PostgresConnection: Sendable {}

/// Calls `body` with a NULL-terminated array of C strings that live for the duration of the call.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    let duplicates = strings.map { strdup($0) }
    defer { duplicates.forEach { free($0) } }
    let pointers = duplicates.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

/// A prepared statement is bound to its parameters' types: the same text with a NULL (of no
/// type) where a value was is another statement.
private struct PreparedStatementKey: Hashable {
    var sql: String
    var types: [Oid]
}
