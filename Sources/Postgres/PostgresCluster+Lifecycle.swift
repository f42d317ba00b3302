import Foundation
import Glibc
import Logging

extension PostgresCluster {
    func startBlocking() throws {
        let binDirectory = try PostgresBinaries.locate(configured: configuration.binDirectory)
        let user = try PostgresServerUser.resolve(systemUser: configuration.systemUser, logger: logger)
        let dataDirectory = configuration.absoluteDataDirectory
        try user.prepareDirectory(dataDirectory, logger: logger)
        chmod(dataDirectory, 0o700)  // the server refuses a group- or world-accessible data directory

        if !FileManager.default.fileExists(atPath: dataDirectory + "/PG_VERSION") {
            try initializeCluster(binDirectory: binDirectory, user: user)
        }
        try user.prepareDirectory(socketDirectory, logger: logger)

        if let lock = PostmasterLockFile(path: dataDirectory + "/postmaster.pid") {
            if lock.isServerAlive {
                try adoptRunningServer(lock)
                try createDatabaseIfMissing(configuration.databaseName)
                return
            }
            logger.notice("removing the stale postmaster.pid of a PostgreSQL server that is gone", metadata: ["pid": "\(lock.processID ?? 0)"])
            lock.remove()
        }
        removeStaleSocketLock()
        try startServer(binDirectory: binDirectory, user: user)
        try createDatabaseIfMissing(configuration.databaseName)
    }

    func stopBlocking(mode: String) throws {
        let dataDirectory = configuration.absoluteDataDirectory
        guard let lock = PostmasterLockFile(path: dataDirectory + "/postmaster.pid"), lock.isServerAlive else {
            return  // not running: nothing to stop
        }
        let binDirectory = try PostgresBinaries.locate(configured: configuration.binDirectory)
        let user = try PostgresServerUser.resolve(systemUser: configuration.systemUser, logger: logger)
        let outcome = try user.run(binDirectory + "/pg_ctl", ["stop", "-D", dataDirectory, "-m", mode, "-w", "-t", "60"])
        guard outcome.succeeded || !(PostmasterLockFile(path: dataDirectory + "/postmaster.pid")?.isServerAlive ?? false) else {
            throw PostgresError(kind: .connection, message: "pg_ctl stop failed: \(outcome.output)")
        }
        logger.info("stopped the embedded PostgreSQL server", metadata: ["dataDirectory": "\(dataDirectory)", "mode": "\(mode)"])
    }

    /// initdb: UTF8, locale C, trust on the unix socket only (the socket directory is private to
    /// the server's user), every TCP connection rejected.
    private func initializeCluster(binDirectory: String, user: PostgresServerUser) throws {
        let dataDirectory = configuration.absoluteDataDirectory
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
        guard contents.isEmpty else {
            throw PostgresError(kind: .connection, message: "\(dataDirectory) is not empty but holds no PostgreSQL cluster (no PG_VERSION); move its contents away or choose another data directory")
        }
        logger.notice("creating the embedded PostgreSQL cluster", metadata: ["dataDirectory": "\(dataDirectory)"])
        let outcome = try user.run(binDirectory + "/initdb", [
            "-D", dataDirectory, "-U", configuration.superuser, "-E", "UTF8", "--locale=C",
            "--auth-local=trust", "--auth-host=reject", "--no-instructions",
        ])
        guard outcome.succeeded else {
            throw PostgresError(kind: .connection, message: "initdb failed for \(dataDirectory): \(outcome.output)")
        }
    }

    private func startServer(binDirectory: String, user: PostgresServerUser) throws {
        let dataDirectory = configuration.absoluteDataDirectory
        let logFile = dataDirectory + "/postgresql.log"
        var settings = configuration.settings
        settings["listen_addresses"] = ""
        settings["port"] = String(configuration.port)
        settings["unix_socket_directories"] = Self.directoryListEntry(socketDirectory)
        // pg_ctl hands -o to the server through /bin/sh, so every word is single-quoted.
        let serverOptions = settings.keys.sorted()
            .flatMap { ["-c", "\($0)=\(settings[$0] ?? "")"] }
            .map(Self.shellQuoted)
            .joined(separator: " ")
        let outcome = try user.run(binDirectory + "/pg_ctl", [
            "start", "-D", dataDirectory, "-l", logFile, "-w", "-t", "60", "-o", serverOptions,
        ])
        guard outcome.succeeded else {
            // Another process may have started it at the same moment: then use that server.
            if let lock = PostmasterLockFile(path: dataDirectory + "/postmaster.pid"), lock.isServerAlive {
                try adoptRunningServer(lock)
                return
            }
            throw PostgresError(kind: .connection, message: "the embedded PostgreSQL server did not start: \(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines))\n--- last lines of \(logFile) ---\n\(Self.tail(of: logFile))")
        }
        logger.info("started the embedded PostgreSQL server", metadata: ["dataDirectory": "\(dataDirectory)", "socketDirectory": "\(socketDirectory)"])
    }

    /// A server still running on this data directory (its owner process died) is used as is,
    /// provided it listens where this configuration says.
    private func adoptRunningServer(_ lock: PostmasterLockFile) throws {
        if lock.port != configuration.port || lock.socketDirectory != socketDirectory {
            throw PostgresError(kind: .connection, message: "a PostgreSQL server (pid \(lock.processID ?? 0)) already runs on \(dataDirectory) with port \(lock.port.map(String.init) ?? "?") and socket directory \(lock.socketDirectory ?? "?"), not the configured ones; stop it (pg_ctl stop -D \(dataDirectory)) and start again")
        }
        logger.notice("reusing the PostgreSQL server already running on the data directory", metadata: ["pid": "\(lock.processID ?? 0)"])
        try waitUntilAcceptingConnections()
    }

    private func waitUntilAcceptingConnections() throws {
        let deadline = ContinuousClock.now + .seconds(60)
        var backoff = ReconnectBackoff()
        while true {
            do {
                try PostgresConnection.connect(conninfo(database: "postgres")).close()
                return
            } catch {
                let delay = backoff.nextDelay()
                guard ContinuousClock.now + delay < deadline else { throw error }
                ReconnectBackoff.sleep(delay)
            }
        }
    }

    /// A socket lock file whose server is gone would make the new server refuse the socket.
    private func removeStaleSocketLock() {
        let socketPath = socketDirectory + "/.s.PGSQL.\(configuration.port)"
        guard let lock = PostmasterLockFile(path: socketPath + ".lock"), !lock.isServerAlive else { return }
        lock.remove()
        unlink(socketPath)
    }

    func createDatabaseIfMissing(_ name: String) throws {
        let connection = try PostgresConnection.connect(conninfo(database: "postgres"))
        defer { connection.close() }
        let existing = try connection.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
        guard existing.isEmpty else { return }
        do {
            try connection.execute("CREATE DATABASE " + quotedIdentifier(name))
        } catch let error as PostgresError where error.sqlState == "42P04" {
            return  // created meanwhile by someone else
        }
    }

    /// One entry of a PostgreSQL directory list: double-quoted when it holds a comma, space or quote.
    static func directoryListEntry(_ path: String) -> String {
        guard path.contains(where: { $0 == "," || $0 == "\"" || $0.isWhitespace }) else { return path }
        return "\"" + path.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func shellQuoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static func tail(of path: String, lines count: Int = 20) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "(no log)" }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(count).joined(separator: "\n")
    }
}
