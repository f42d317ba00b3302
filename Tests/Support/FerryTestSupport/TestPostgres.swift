import Foundation
import Glibc
import Logging
import Postgres
import Synchronization

/// A throwaway PostgreSQL cluster for the tests of one process, and a fresh database per test.
///
/// Swift Testing runs tests in parallel in one process, so the cluster is started by one shared
/// task that every caller awaits. It lives under /tmp/ferry-test-pg-<pid>-<random> with fsync
/// off, and is stopped (immediate) and removed when the process exits; directories of earlier
/// test processes that are gone (killed before their atexit ran) are cleaned up first.
public enum TestPostgres {
    static let directoryPrefix = "ferry-test-pg-"
    private static let startup = Mutex<Task<PostgresCluster, any Error>?>(nil)
    /// What the atexit handler tears down.
    private static let running = Mutex<(cluster: PostgresCluster, root: String)?>(nil)
    private static let databaseCounter = Atomic<Int>(0)

    public static func cluster() async throws -> PostgresCluster {
        let task = startup.withLock { task in
            if let task { return task }
            let created = Task { try await startCluster() }
            task = created
            return created
        }
        return try await task.value
    }

    /// A fresh, empty database on the test cluster, as a conninfo string.
    public static func makeDatabase() async throws -> String {
        let cluster = try await cluster()
        let number = databaseCounter.wrappingAdd(1, ordering: .relaxed).newValue
        let name = "test_\(number)_\(UInt32.random(in: 0...UInt32.max))"
        return try await cluster.createDatabase(named: name)
    }

    private static func startCluster() async throws -> PostgresCluster {
        var logger = Logger(label: "ferry.test-postgres")
        logger.logLevel = .warning
        removeStaleDirectories(logger: logger)
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let root = "/tmp/\(directoryPrefix)\(getpid())-\(suffix)"
        let configuration = PostgresClusterConfiguration(
            dataDirectory: root + "/data",
            settings: [
                "fsync": "off",
                "synchronous_commit": "off",
                "full_page_writes": "off",
                "max_connections": "1000",
                "shared_buffers": "32MB",
            ]
        )
        let cluster = PostgresCluster(configuration: configuration, logger: logger)
        running.withLock { $0 = (cluster, root) }
        atexit { TestPostgres.tearDown() }
        _ = try await cluster.start()
        return cluster
    }

    /// Runs at process exit: stop the server at once and remove its directory.
    private static func tearDown() {
        guard let (cluster, root) = running.withLock({ $0 }) else { return }
        try? cluster.stopImmediately()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Directories of test processes whose pid is gone: stop a postmaster that survived them, remove.
    private static func removeStaleDirectories(logger: Logger) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for entry in entries where entry.hasPrefix(directoryPrefix) {
            let owner = entry.dropFirst(directoryPrefix.count).prefix { $0 != "-" }
            guard let pid = pid_t(owner), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let root = "/tmp/" + entry
            let stale = PostgresCluster(configuration: PostgresClusterConfiguration(dataDirectory: root + "/data"), logger: logger)
            try? stale.stopImmediately()
            try? FileManager.default.removeItem(atPath: root)
        }
    }
}
