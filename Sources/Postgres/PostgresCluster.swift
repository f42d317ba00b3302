import Foundation
import Logging

/// A private PostgreSQL cluster this process starts and owns: created with initdb on first use,
/// started with pg_ctl, reachable only through a unix socket, running as an unprivileged system
/// user when we are root.
///
/// Its blocking work (initdb, pg_ctl, waiting for the server) runs on a dedicated thread, never
/// on the cooperative pool.
public final class PostgresCluster: Sendable {
    public let configuration: PostgresClusterConfiguration
    let logger: Logger

    public init(configuration: PostgresClusterConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// "host=<socket directory> port=<port> dbname=<database> user=<superuser>"
    public var conninfo: String {
        configuration.conninfo(database: configuration.databaseName)
    }

    /// A conninfo for another database of this cluster.
    public func conninfo(database: String) -> String {
        configuration.conninfo(database: database)
    }

    public var dataDirectory: String { configuration.absoluteDataDirectory }
    public var socketDirectory: String { configuration.resolvedSocketDirectory }

    /// initdb on first use, then start the server — or reuse it when it is already running (a
    /// previous process was killed and its postmaster survived); a stale postmaster.pid of a dead
    /// server is cleared. Creates the database if missing. Returns `conninfo`.
    public func start() async throws -> String {
        try await DedicatedThread.run(name: "ferry-pg-start") { [self] in
            try startBlocking()
            return conninfo
        }
    }

    /// Creates a database (if missing) and returns its conninfo. For tests and tools.
    public func createDatabase(named name: String) async throws -> String {
        try await DedicatedThread.run(name: "ferry-pg-createdb") { [self] in
            try createDatabaseIfMissing(name)
            return conninfo(database: name)
        }
    }

    /// `pg_ctl stop -m fast`: disconnects sessions, rolls back their transactions, shuts down cleanly.
    public func stop() async throws {
        try await DedicatedThread.run(name: "ferry-pg-stop") { [self] in
            try stopBlocking(mode: "fast")
        }
    }

    /// `pg_ctl stop -m immediate`, blocking the caller: for atexit handlers and test teardown.
    /// Crash-safe (the next start replays the WAL), and quick.
    public func stopImmediately() throws {
        try stopBlocking(mode: "immediate")
    }
}
