import Foundation

/// Where the PostgreSQL server programs (initdb, pg_ctl, postgres) are installed.
enum PostgresBinaries {
    static let requiredPrograms = ["initdb", "pg_ctl", "postgres"]

    /// The configured directory, else `$FERRY_PG_BINDIR`, else `pg_config --bindir`, else the
    /// highest version under /usr/lib/postgresql (Debian's layout). A directory only counts when
    /// it holds all the server programs: libpq-dev's pg_config may name a client-only install.
    static func locate(configured: String?) throws -> String {
        var candidates: [String] = []
        if let configured {
            candidates.append(configured)
        } else if let environment = ProcessInfo.processInfo.environment["FERRY_PG_BINDIR"], !environment.isEmpty {
            // Named by the operator: that directory or none. Falling back would start another
            // major version than the one asked for, perhaps on a cluster it cannot read.
            candidates.append(environment)
        } else {
            if let fromPgConfig = pgConfigBinDirectory() { candidates.append(fromPgConfig) }
            candidates += debianVersionDirectories()
        }
        if let found = candidates.first(where: holdsServerPrograms) {
            return found
        }
        let looked = candidates.isEmpty ? "nowhere" : candidates.joined(separator: ", ")
        throw PostgresError(
            kind: .connection,
            message: "PostgreSQL server programs (initdb, pg_ctl, postgres) not found (looked in: \(looked)). "
                + "Install them with `apt-get install postgresql` (Debian package `postgresql`), "
                + "or set FERRY_PG_BINDIR to the directory that holds them, or set DATABASE_URL to use an existing server."
        )
    }

    static func holdsServerPrograms(_ directory: String) -> Bool {
        requiredPrograms.allSatisfy { FileManager.default.isExecutableFile(atPath: directory + "/" + $0) }
    }

    private static func pgConfigBinDirectory() -> String? {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let pgConfig = searchPath.split(separator: ":").map { $0 + "/pg_config" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let pgConfig, let outcome = try? Subprocess.run(pgConfig, ["--bindir"]), outcome.succeeded else {
            return nil
        }
        let directory = outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return directory.isEmpty ? nil : directory
    }

    /// /usr/lib/postgresql/<version>/bin, highest version first.
    private static func debianVersionDirectories() -> [String] {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }
            .map { "\(root)/\($0)/bin" }
    }
}
