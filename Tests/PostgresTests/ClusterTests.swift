import FerryTestSupport
import Foundation
import Glibc
import Postgres
import Testing

@Suite struct ClusterTests {
    @Test func testClusterStartsOnceForConcurrentCallers() async throws {
        let clusters = try await withThrowingTaskGroup(of: PostgresCluster.self) { group in
            for _ in 0..<8 { group.addTask { try await TestPostgres.cluster() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let first = try #require(clusters.first)
        #expect(clusters.allSatisfy { $0 === first })
        #expect(first.dataDirectory.hasPrefix("/tmp/ferry-test-pg-\(getpid())-"))
    }

    @Test func databasesAreFreshAndDistinct() async throws {
        let one = try await TestPostgres.makeDatabase()
        let two = try await TestPostgres.makeDatabase()
        #expect(one != two)
        let names = try await onOwnThread {
            try [one, two].map { conninfo in
                let connection = try PostgresConnection.connect(conninfo)
                defer { connection.close() }
                let tables = try connection.query("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'").onlyRow().decode("n", as: Int.self)
                return (try connection.query("SELECT current_database() AS d").onlyRow().decode("d", as: String.self), tables)
            }
        }
        #expect(names[0].0 != names[1].0)
        #expect(names.allSatisfy { $0.1 == 0 })
    }

    /// A private cluster through its whole life: initdb, start, reuse by a second owner, a server
    /// restart under a live pool, a stale postmaster.pid after a crash.
    @Test func lifecycle() async throws {
        let root = "/tmp/ferry-pg-lifecycle-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let configuration = PostgresClusterConfiguration(
            dataDirectory: root + "/data", port: 5499, databaseName: "app", settings: ["fsync": "off"]
        )
        let cluster = PostgresCluster(configuration: configuration, logger: testLogger)
        defer {
            try? cluster.stopImmediately()
            try? FileManager.default.removeItem(atPath: root)
        }

        // As root, an ancestor the server's user cannot enter gets o+x (and only that).
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])

        let conninfo = try await cluster.start()
        if geteuid() == 0 {
            let mode = try #require(FileManager.default.attributesOfItem(atPath: root)[.posixPermissions] as? Int)
            #expect(mode == 0o701)
        }
        #expect(conninfo == "host=\(root)/data/run port=5499 dbname=app user=ferry")
        let pool = PostgresPool(configuration: PostgresPoolConfiguration(conninfo: conninfo, size: 2), logger: testLogger)
        let identity = try await pool.withConnection { connection in
            let row = try connection.query("SELECT current_database() AS d, current_user AS u, current_setting('listen_addresses') AS l").onlyRow()
            return [try row.decode("d", as: String.self), try row.decode("u", as: String.self), try row.decode("l", as: String.self)]
        }
        #expect(identity == ["app", "ferry", ""])
        if geteuid() == 0 {
            var info = stat()
            #expect(stat(root + "/data", &info) == 0)
            #expect(info.st_uid != 0, "as root the cluster's files belong to the system user")
        }

        // A second owner (a restarted process) finds the server running and reuses it.
        let postmasterPID = try String(contentsOfFile: root + "/data/postmaster.pid", encoding: .utf8).split(separator: "\n").first
        let secondOwner = PostgresCluster(configuration: configuration, logger: testLogger)
        #expect(try await secondOwner.start() == conninfo)
        let postmasterPIDAfter = try String(contentsOfFile: root + "/data/postmaster.pid", encoding: .utf8).split(separator: "\n").first
        #expect(postmasterPID == postmasterPIDAfter)

        // The server restarts under a live pool: the pool's next call gets a new connection.
        try await cluster.stop()
        _ = try await cluster.start()
        let afterRestart = try await pool.withConnection { try $0.query("SELECT 7 AS n").onlyRow().decode("n", as: Int.self) }
        #expect(afterRestart == 7)
        await pool.close()

        // A crash leaves postmaster.pid naming a process that is gone: the next start clears it.
        try cluster.stopImmediately()
        let lockFile = root + "/data/postmaster.pid"
        #expect(!FileManager.default.fileExists(atPath: lockFile))
        try "4194000\n\(root)/data\n0\n5499\n\(root)/data/run\n\n\nready\n".write(toFile: lockFile, atomically: false, encoding: .utf8)
        #expect(try await cluster.start() == conninfo)
        let reopened = try await onOwnThread {
            let connection = try PostgresConnection.connect(conninfo)
            defer { connection.close() }
            return try connection.query("SELECT 1 AS n").onlyRow().decode("n", as: Int.self)
        }
        #expect(reopened == 1)
    }
}
