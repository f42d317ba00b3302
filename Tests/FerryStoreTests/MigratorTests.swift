@testable import FerryStore
import FerryTestSupport
import Postgres
import Testing

@Suite("Migrator: each migration once, even when instances start together")
struct MigratorTests {
    /// Runs `body` with pools on one fresh, empty database, closing them afterwards.
    private func withEmptyDatabase<T>(pools count: Int, _ body: ([PostgresPool]) async throws -> T) async throws -> T {
        let conninfo = try await TestPostgres.makeDatabase()
        let pools = (0..<count).map { _ in PostgresPool(configuration: .init(conninfo: conninfo, size: 1), logger: quietLogger) }
        do {
            let result = try await body(pools)
            for pool in pools { await pool.close() }
            return result
        } catch {
            for pool in pools { await pool.close() }
            throw error
        }
    }

    @Test("the bundled migrations apply once; a second run applies nothing; appliedVersion reports the latest")
    func appliesOnce() async throws {
        try await withEmptyDatabase(pools: 1) { pools in
            let pool = pools[0]
            let migrator = try Migrator(logger: quietLogger)
            #expect(migrator.migrations.first?.version == 1)
            #expect(migrator.migrations.first?.name == "0001_foundation")
            #expect(try await Migrator.appliedVersion(pool) == 0)

            #expect(try await migrator.migrate(pool) == migrator.migrations.map(\.version))
            #expect(try await Migrator.appliedVersion(pool) == migrator.latestVersion)
            #expect(try await migrator.migrate(pool) == [])

            let recorded = try await pool.withConnection { connection in
                try connection.query("SELECT version, name FROM schema_migrations ORDER BY version").map {
                    "\(try $0.decode(0, as: Int.self)) \(try $0.decode(1, as: String.self))"
                }
            }
            #expect(recorded == migrator.migrations.map { "\($0.version) \($0.name)" })
            let tables = try await pool.withConnection { connection in
                try connection.query("SELECT to_regclass('tasks') IS NOT NULL AND to_regclass('events') IS NOT NULL")[0].decode(0, as: Bool.self)
            }
            #expect(tables)
        }
    }

    @Test("migrate from several pools at once: the advisory lock lets each migration apply exactly once, none fails")
    func concurrentMigrations() async throws {
        // Plain CREATE TABLE (no IF NOT EXISTS) and an INSERT: a second application would fail or count twice.
        let migrations = [
            Migrator.Migration(version: 1, name: "0001_first", sql: "CREATE TABLE first_table (id int); CREATE TABLE applications (version int)"),
            Migrator.Migration(version: 2, name: "0002_second", sql: "CREATE TABLE second_table (id int); INSERT INTO applications VALUES (2)"),
            Migrator.Migration(version: 3, name: "0003_third", sql: "SELECT pg_sleep(0.05); INSERT INTO applications VALUES (3)"),
        ]
        let migrator = Migrator(migrations: migrations.reversed(), logger: quietLogger)
        try await withEmptyDatabase(pools: 6) { pools in
            let results = try await withThrowingTaskGroup(of: [Int].self) { group in
                for pool in pools {
                    group.addTask { try await migrator.migrate(pool) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 6)
            #expect(results.flatMap { $0 }.sorted() == [1, 2, 3])
            #expect(results.filter { !$0.isEmpty } == [[1, 2, 3]])
            let applications = try await pools[0].withConnection { connection in
                try connection.query("SELECT version FROM applications ORDER BY version").map { try $0.decode(0, as: Int.self) }
            }
            #expect(applications == [2, 3])
            for pool in pools {
                #expect(try await Migrator.appliedVersion(pool) == 3)
            }
        }
    }

    @Test("a failing migration is rolled back, not recorded, and does not keep the lock")
    func failingMigration() async throws {
        let good = Migrator.Migration(version: 1, name: "0001_good", sql: "CREATE TABLE good (id int)")
        let bad = Migrator.Migration(version: 2, name: "0002_bad", sql: "CREATE TABLE half_done (id int); SELECT no_such_function()")
        try await withEmptyDatabase(pools: 2) { pools in
            await #expect(throws: PostgresError.self) {
                try await Migrator(migrations: [good, bad], logger: quietLogger).migrate(pools[0])
            }
            #expect(try await Migrator.appliedVersion(pools[0]) == 1)
            let halfDone = try await pools[0].withConnection { try $0.query("SELECT to_regclass('half_done') IS NULL")[0].decode(0, as: Bool.self) }
            #expect(halfDone)
            // Another instance is not blocked by a lock left behind, and finishes the work once fixed.
            let fixed = Migrator.Migration(version: 2, name: "0002_bad", sql: "CREATE TABLE half_done (id int)")
            #expect(try await Migrator(migrations: [good, fixed], logger: quietLogger).migrate(pools[1]) == [2])
        }
    }
}
