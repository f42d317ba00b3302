import FerryStore
import Foundation
import Logging
import Postgres

/// The database an invocation uses: `DATABASE_URL`, or the embedded cluster under the data
/// directory, created and started on first use.
///
/// The embedded cluster has one owner, recorded in `<data>/postgres.owner`: the `ferry serve`
/// that started it, or that found it running without a live owner (its previous owner was
/// killed). The owner stops it on exit, unless other Ferry processes still use it. Commands
/// (`migrate`, `tenant create`) use a running cluster as they find it, and stop only one they
/// started themselves.
struct DatabaseLauncher {
    enum Role {
        case server
        case command
    }

    let settings: FerrySettings
    let role: Role
    let logger: Logger

    struct Opened {
        var database: FerryDatabase
        var conninfo: String
        /// The embedded cluster, when this process owns it.
        var ownedCluster: PostgresCluster?
        var ownerFile: String?
        var logger: Logger

        /// Closes the pool, and stops an owned cluster nobody else is using.
        func close() async {
            let othersConnected = ownedCluster == nil ? 0 : ((try? await Self.otherFerryConnections(database)) ?? 0)
            await database.pool.close()
            guard let ownedCluster, let ownerFile else { return }
            try? FileManager.default.removeItem(atPath: ownerFile)
            guard othersConnected == 0 else {
                logger.info("leaving the embedded PostgreSQL running: other Ferry processes use it")
                return
            }
            do {
                try await ownedCluster.stop()
            } catch {
                logger.warning("stopping the embedded PostgreSQL failed", metadata: ["error": "\(error)"])
            }
        }

        private static func otherFerryConnections(_ database: FerryDatabase) async throws -> Int {
            try await database.pool.withConnection { connection in
                try connection.query(
                    """
                    SELECT count(DISTINCT application_name) FROM pg_stat_activity
                    WHERE datname = current_database() AND application_name LIKE 'ferry %'
                      AND application_name <> current_setting('application_name')
                    """
                ).firstRow().decode(0, as: Int.self)
            }
        }
    }

    /// Connects and applies missing migrations.
    func open(poolSize: Int, applicationName: String) async throws -> Opened {
        var conninfo: String
        var ownedCluster: PostgresCluster?
        var ownerFile: String?
        if let url = settings.databaseURL {
            conninfo = url
        } else {
            let cluster = PostgresCluster(
                configuration: PostgresClusterConfiguration(
                    dataDirectory: (settings.dataDirectory as NSString).appendingPathComponent("postgres"),
                    settings: ["max_connections": "200"]
                ),
                logger: logger
            )
            let ownerPath = (settings.dataDirectory as NSString).appendingPathComponent("postgres.owner")
            let wasRunning = cluster.isRunning
            let hasLiveOwner = wasRunning && Self.liveOwner(recordedIn: ownerPath) != nil
            logger.info(wasRunning ? "using the running embedded PostgreSQL" : "starting the embedded PostgreSQL", metadata: [
                "directory": "\(cluster.dataDirectory)",
            ])
            conninfo = try await cluster.start()
            if !wasRunning || (role == .server && !hasLiveOwner) {
                ownedCluster = cluster
                ownerFile = ownerPath
                try Data("\(getpid())\n".utf8).write(to: URL(fileURLWithPath: ownerPath))
            }
        }
        let pool = PostgresPool(
            configuration: PostgresPoolConfiguration(conninfo: conninfo, size: poolSize, applicationName: applicationName),
            logger: logger
        )
        let opened = Opened(database: FerryDatabase(pool: pool), conninfo: conninfo, ownedCluster: ownedCluster, ownerFile: ownerFile, logger: logger)
        do {
            let applied = try await Migrator(logger: logger).migrate(pool)
            if !applied.isEmpty { logger.info("migrations applied", metadata: ["versions": "\(applied)"]) }
        } catch {
            await opened.close()
            throw error
        }
        return opened
    }

    /// The pid in the owner file, if that process is alive and is Ferry.
    static func liveOwner(recordedIn path: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0, pid != getpid(),
              isRunning(pid),
              let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
              name.trimmingCharacters(in: .whitespacesAndNewlines) == "ferry"
        else { return nil }
        return pid
    }

    /// Whether the process runs: a killed one that its parent has not reaped yet (a zombie)
    /// keeps its /proc entry and name. Restarted at once after a kill -9, the next `ferry serve`
    /// took such an owner for alive, did not adopt the cluster, and left it running at its exit.
    static func isRunning(_ pid: pid_t) -> Bool {
        // "pid (comm) state …": the name may hold spaces and parentheses, the state follows the last ")".
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = stat.lastIndex(of: ")"),
              let state = stat[stat.index(after: nameEnd)...].first(where: { !$0.isWhitespace })
        else { return false }
        return state != "Z" && state != "X"
    }
}
