import Foundation
import Logging
import Postgres

/// Applies the numbered SQL files of `migrations/` in order, each once, each in its own
/// transaction, recording them in `schema_migrations`.
///
/// Several instances may start at once against one database: a session-level advisory lock
/// serialises them, so the second waits and then finds nothing left to do.
public struct Migrator: Sendable {
    public struct Migration: Sendable, Equatable {
        public var version: Int
        public var name: String
        public var sql: String
    }

    /// Any 64-bit number unique to this purpose; `ferry` spelt in ASCII.
    static let advisoryLockKey: Int64 = 0x6665_7272_7900

    public let migrations: [Migration]
    private let logger: Logger

    public init(logger: Logger) throws {
        self.init(migrations: try Self.bundledMigrations(), logger: logger)
    }

    public init(migrations: [Migration], logger: Logger) {
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.logger = logger
    }

    /// The latest version the bundled files define.
    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Applies what is missing. Returns the versions applied now.
    @discardableResult
    public func migrate(_ pool: PostgresPool) async throws -> [Int] {
        let migrations = self.migrations
        let logger = self.logger
        return try await pool.withConnection { connection in
            try connection.execute("SELECT pg_advisory_lock($1)", [Self.advisoryLockKey])
            defer { _ = try? connection.execute("SELECT pg_advisory_unlock($1)", [Self.advisoryLockKey]) }
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version     integer PRIMARY KEY,
                    name        text NOT NULL,
                    applied_at  timestamptz NOT NULL DEFAULT now()
                )
                """)
            let applied = Set(try connection.query("SELECT version FROM schema_migrations").map { try $0.decode(0, as: Int.self) })
            var appliedNow: [Int] = []
            for migration in migrations where !applied.contains(migration.version) {
                logger.info("applying migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                try connection.executeScript("BEGIN")
                do {
                    try connection.executeScript(migration.sql)
                    try connection.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                        [migration.version, migration.name]
                    )
                    try connection.executeScript("COMMIT")
                } catch {
                    _ = try? connection.executeScript("ROLLBACK")
                    throw error
                }
                appliedNow.append(migration.version)
            }
            return appliedNow
        }
    }

    /// The highest applied version, or 0 on an empty database.
    public static func appliedVersion(_ pool: PostgresPool) async throws -> Int {
        try await pool.withConnection { connection in
            let exists = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL")
            guard try exists.first?.decode(0, as: Bool.self) == true else { return 0 }
            return try connection.query("SELECT coalesce(max(version), 0) FROM schema_migrations").first?.decode(0, as: Int.self) ?? 0
        }
    }

    /// Reads `NNNN_name.sql` files shipped in this module's resource bundle.
    static func bundledMigrations() throws -> [Migration] {
        guard let directory = Bundle.module.resourceURL?.appendingPathComponent("Migrations") else {
            throw MigrationError.missingResources
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        return try names.filter { $0.hasSuffix(".sql") }.map { name in
            guard let version = Int(name.prefix { $0.isNumber }) else { throw MigrationError.badName(name) }
            let sql = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            return Migration(version: version, name: String(name.dropLast(4)), sql: sql)
        }
    }
}

public enum MigrationError: Error, CustomStringConvertible {
    case missingResources
    case badName(String)

    public var description: String {
        switch self {
        case .missingResources: "the migrations resource folder is missing from the FerryStore bundle"
        case .badName(let name): "migration file \(name) does not start with a version number"
        }
    }
}
