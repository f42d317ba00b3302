import Foundation

/// An embedded, private PostgreSQL cluster: `ferry serve`'s default without DATABASE_URL, and the
/// test clusters.
public struct PostgresClusterConfiguration: Sendable {
    /// Where the cluster lives (created if missing). Relative paths are taken from the current directory.
    public var dataDirectory: String
    /// Where the server's unix socket goes; nil picks `dataDirectory/run`, or a short
    /// `/tmp/ferry-pg-<hash>` when that path would exceed the 107-byte unix socket limit.
    public var socketDirectory: String?
    /// Only a unix socket is used (no TCP), so this port cannot clash with TCP listeners.
    public var port: Int
    /// Created on first start.
    public var databaseName: String
    /// The cluster's superuser (initdb -U).
    public var superuser: String
    /// When running as root, the server runs as this unprivileged user, created if missing.
    public var systemUser: String
    /// nil: $FERRY_PG_BINDIR, else `pg_config --bindir`, else the highest /usr/lib/postgresql/*/bin.
    public var binDirectory: String?
    /// Extra server settings (`-c name=value`), e.g. fsync, max_connections.
    public var settings: [String: String]

    public init(
        dataDirectory: String,
        socketDirectory: String? = nil,
        port: Int = 5432,
        databaseName: String = "ferry",
        superuser: String = "ferry",
        systemUser: String = "ferry-postgres",
        binDirectory: String? = nil,
        settings: [String: String] = [:]
    ) {
        self.dataDirectory = dataDirectory
        self.socketDirectory = socketDirectory
        self.port = port
        self.databaseName = databaseName
        self.superuser = superuser
        self.systemUser = systemUser
        self.binDirectory = binDirectory
        self.settings = settings
    }
}

extension PostgresClusterConfiguration {
    /// Longest unix socket path (sun_path is 108 bytes with the terminating NUL).
    static let maximumSocketPathLength = 107

    var absoluteDataDirectory: String {
        let url = URL(fileURLWithPath: dataDirectory, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
        // Symbolic links the operator set up are followed, so the real directories get checked.
        return url.standardizedFileURL.resolvingSymlinksInPath().path
    }

    var resolvedSocketDirectory: String {
        if let socketDirectory { return socketDirectory }
        let dataDirectory = absoluteDataDirectory
        let preferred = dataDirectory + "/run"
        if (preferred + "/.s.PGSQL.\(port)").utf8.count <= Self.maximumSocketPathLength {
            return preferred
        }
        return "/tmp/ferry-pg-" + Self.stableHash(dataDirectory)
    }

    /// FNV-1a: the same data directory always maps to the same short socket directory.
    static func stableHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// A libpq connection string for `database` on this cluster.
    func conninfo(database: String) -> String {
        [
            ("host", resolvedSocketDirectory), ("port", String(port)),
            ("dbname", database), ("user", superuser),
        ]
        .map { "\($0.0)=\(Self.conninfoValue($0.1))" }
        .joined(separator: " ")
    }

    /// A conninfo value, single-quoted with `\` escapes when it is empty or holds spaces or quotes.
    static func conninfoValue(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "'" || $0 == "\\" || $0.isWhitespace }
        guard needsQuotes else { return value }
        var quoted = "'"
        for character in value {
            if character == "'" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "'"
    }
}
