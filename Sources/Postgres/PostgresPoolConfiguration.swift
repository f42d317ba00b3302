public struct PostgresPoolConfiguration: Sendable {
    /// libpq connection string or URI.
    public var conninfo: String
    /// Connections, and so dedicated threads, at most. Opened lazily, as callers need them.
    public var size: Int
    /// `application_name` of the pool's sessions, as `pg_stat_activity` shows it.
    public var applicationName: String?
    /// How long a caller waits for a connection to be (re)opened — retrying with backoff while the
    /// server is down or restarting — before it gets the connection error instead.
    public var connectTimeout: Duration

    public init(conninfo: String, size: Int = 8, applicationName: String? = nil, connectTimeout: Duration = .seconds(10)) {
        self.conninfo = conninfo
        self.size = size
        self.applicationName = applicationName
        self.connectTimeout = connectTimeout
    }
}
