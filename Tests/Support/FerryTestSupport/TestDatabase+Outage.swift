import Postgres

extension TestDatabase {
    /// The database goes away for its pools, as when its server is down: new connections are
    /// refused and the open ones are ended. Only this test's database: the cluster is shared by
    /// the tests running alongside.
    public func beginOutage() async throws {
        try await Self.beginOutage(ofDatabaseNamed: name)
    }

    /// `beginOutage()` for a database known by name (`SELECT current_database()`), for harnesses
    /// that hold only its pool.
    public static func beginOutage(ofDatabaseNamed name: String) async throws {
        try await administer { admin in
            // ALTER DATABASE takes no parameters; the name was made by `make`, not by a test.
            try admin.executeScript("ALTER DATABASE \"\(name)\" ALLOW_CONNECTIONS false")
            // Waits (up to 5 s each) until the backends have exited: terminating only signals
            // them, and a pooled connection checked in the meantime still looked alive, so the
            // outage's first call failed mid-statement (a 500) instead of at connecting (a 503).
            try admin.execute("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1", [name])
        }
    }

    /// The database is back.
    public func endOutage() async throws {
        try await Self.endOutage(ofDatabaseNamed: name)
    }

    public static func endOutage(ofDatabaseNamed name: String) async throws {
        try await administer { admin in
            try admin.executeScript("ALTER DATABASE \"\(name)\" ALLOW_CONNECTIONS true")
        }
    }

    private static func administer(_ body: @escaping @Sendable (PostgresConnection) throws -> Void) async throws {
        let cluster = try await TestPostgres.cluster()
        let admin = PostgresPool(configuration: .init(conninfo: cluster.conninfo(database: "postgres"), size: 1), logger: quietLogger)
        do {
            try await admin.withConnection(body)
        } catch {
            await admin.close()
            throw error
        }
        await admin.close()
    }
}
