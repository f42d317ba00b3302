import FerryStore
import Foundation
import Logging
import Postgres
import Synchronization

/// A migrated Ferry database for one test: a copy of a template that was migrated once per
/// test process (copying a template is much faster than running the migrations every time).
public struct TestDatabase: Sendable {
    public let database: FerryDatabase
    public let conninfo: String
    /// The database's name on the test cluster.
    public let name: String

    private static let template = Mutex<Task<String, any Error>?>(nil)

    /// `connectTimeout`: how long a pool call waits for a connection while the database is away
    /// (see `beginOutage()`).
    public static func make(poolSize: Int = 4, connectTimeout: Duration = .seconds(10)) async throws -> TestDatabase {
        let templateName = try await migratedTemplate()
        let cluster = try await TestPostgres.cluster()
        let name = "ferry_\(UInt64.random(in: 0...UInt64.max))"
        let admin = PostgresPool(configuration: .init(conninfo: cluster.conninfo(database: "postgres"), size: 1), logger: quietLogger)
        do {
            try await admin.withConnection { connection in
                // CREATE DATABASE takes no parameters; both names are made here, not by a test.
                try connection.executeScript("CREATE DATABASE \"\(name)\" TEMPLATE \"\(templateName)\"")
            }
        } catch {
            await admin.close()
            throw error
        }
        await admin.close()
        let conninfo = cluster.conninfo(database: name)
        let pool = PostgresPool(
            configuration: .init(conninfo: conninfo, size: poolSize, applicationName: "ferry test", connectTimeout: connectTimeout),
            logger: quietLogger
        )
        return TestDatabase(database: FerryDatabase(pool: pool), conninfo: conninfo, name: name)
    }

    public func close() async {
        await database.pool.close()
    }

    private static func migratedTemplate() async throws -> String {
        let task = template.withLock { task in
            if let task { return task }
            let created = Task {
                let conninfo = try await TestPostgres.makeDatabase()
                let pool = PostgresPool(configuration: .init(conninfo: conninfo, size: 1), logger: quietLogger)
                try await Migrator(logger: quietLogger).migrate(pool)
                let name = try await pool.withConnection { try $0.query("SELECT current_database()")[0].decode(0, as: String.self) }
                await pool.close()
                return name
            }
            task = created
            return created
        }
        return try await task.value
    }
}

public let quietLogger: Logger = {
    var logger = Logger(label: "ferry.test")
    logger.logLevel = ProcessInfo.processInfo.environment["FERRY_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
    return logger
}()
