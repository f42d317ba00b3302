import FerryTestSupport
import Postgres

/// Each API test case copies a database from the template; there are hundreds of cases, so each
/// copy is dropped as soon as its case ends instead of piling up until the cluster is removed.
enum DatabaseDropper {
    /// The database's name, asked of the server (the pool's conninfo is not parsed).
    static func name(of database: TestDatabase) async throws -> String {
        try await database.database.pool.withConnection { connection in
            try connection.query("SELECT current_database()")[0].decode(0, as: String.self)
        }
    }

    /// Drops `name` once nothing uses it; failures only cost disk space, so they are ignored.
    static func drop(named name: String) async {
        guard let cluster = try? await TestPostgres.cluster() else { return }
        let admin = PostgresPool(configuration: .init(conninfo: cluster.conninfo(database: "postgres"), size: 1), logger: quietLogger)
        // DROP DATABASE takes no parameters; the name is the server's own, quoted as an identifier.
        let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        try? await admin.withConnection { connection in
            try connection.executeScript("DROP DATABASE IF EXISTS \(quoted) WITH (FORCE)")
        }
        await admin.close()
    }
}
