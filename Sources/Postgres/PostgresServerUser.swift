import Foundation
import Glibc
import Logging

/// The account the PostgreSQL server runs as. PostgreSQL refuses to run as root, so when we are
/// root the server runs as an unprivileged system user (created if missing) that owns the
/// cluster's files; otherwise it runs as ourselves.
struct PostgresServerUser {
    let name: String
    let userID: uid_t
    let groupID: gid_t
    /// Whether commands must switch to this user (we are root).
    let needsSwitch: Bool

    static func resolve(systemUser: String, logger: Logger) throws -> PostgresServerUser {
        guard geteuid() == 0 else {
            return PostgresServerUser(name: NSUserName(), userID: geteuid(), groupID: getegid(), needsSwitch: false)
        }
        if let existing = lookUp(systemUser) {
            return existing
        }
        logger.notice("creating system user \(systemUser) to run the embedded PostgreSQL server (it refuses to run as root)")
        let outcome = try Subprocess.run(try executable("useradd"), [
            "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", systemUser,
        ])
        guard outcome.succeeded || outcome.exitStatus == 9, let created = lookUp(systemUser) else {
            throw PostgresError(kind: .connection, message: "could not create the system user \(systemUser) for PostgreSQL: \(outcome.output). "
                + "Create it yourself (useradd --system --no-create-home --shell /usr/sbin/nologin \(systemUser)) or run Ferry as a non-root user.")
        }
        return created
    }

    /// `runuser -u USER -- program …` when we are root, the program itself otherwise.
    func run(_ program: String, _ arguments: [String]) throws -> Subprocess.Outcome {
        guard needsSwitch else { return try Subprocess.run(program, arguments) }
        return try Subprocess.run(try Self.executable("runuser"), ["-u", name, "--", program] + arguments)
    }

    /// Creates `path` (mode 0700) if missing and makes sure this user owns it and can reach it.
    /// An existing directory of another owner is taken over only when it is empty or holds a
    /// PostgreSQL cluster; a symbolic link is refused (a planted link must not redirect the chown).
    func prepareDirectory(_ path: String, logger: Logger) throws {
        var info = stat()
        if lstat(path, &info) != 0 {
            // Missing parents get ordinary permissions; only the directory itself is private.
            let parent = (path as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            } catch {
                throw PostgresError(kind: .connection, message: "could not create \(parent): \(error.localizedDescription)")
            }
            guard mkdir(path, 0o700) == 0 || errno == EEXIST, lstat(path, &info) == 0 else {
                throw PostgresError(kind: .connection, message: "could not create \(path): \(String(cString: strerror(errno)))")
            }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw PostgresError(kind: .connection, message: "\(path) exists and is not a directory (or is a symbolic link); move it away or configure the real directory")
        }
        if info.st_uid != userID {
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            guard needsSwitch, contents.isEmpty || contents.contains("PG_VERSION") else {
                throw PostgresError(kind: .connection, message: "\(path) belongs to another user (uid \(info.st_uid)) and the PostgreSQL server runs as \(name); give it to \(name) or choose another directory")
            }
            try giveOwnership(of: path)
        }
        if needsSwitch {
            try grantTraversal(toAncestorsOf: path, logger: logger)
        }
    }

    /// chown -R: the directory and, when it was someone else's, everything in it.
    private func giveOwnership(of path: String) throws {
        var paths = [path]
        if let contents = FileManager.default.enumerator(atPath: path) {
            for case let relative as String in contents { paths.append(path + "/" + relative) }
        }
        for item in paths where lchown(item, userID, groupID) != 0 {
            throw PostgresError(kind: .connection, message: "could not give \(item) to user \(name): \(String(cString: strerror(errno)))")
        }
    }

    /// Every directory above `path` must be searchable by this user. Where one is not (root's home
    /// is drwx------), grant only search permission to others (o+x): nobody can list or read it
    /// through this change, only pass through it. Each change is logged.
    private func grantTraversal(toAncestorsOf path: String, logger: Logger) throws {
        var ancestor = ""
        for component in path.split(separator: "/").dropLast() {
            ancestor += "/" + component
            var info = stat()
            guard stat(ancestor, &info) == 0 else { continue }
            let mode = info.st_mode
            let searchable: Bool
            if info.st_uid == userID {
                searchable = mode & S_IXUSR != 0
            } else if info.st_gid == groupID {
                searchable = mode & S_IXGRP != 0
            } else {
                searchable = mode & S_IXOTH != 0
            }
            guard !searchable else { continue }
            guard chmod(ancestor, (mode & 0o7777) | S_IXOTH) == 0 else {
                throw PostgresError(kind: .connection, message: "the PostgreSQL user \(name) cannot reach \(path) because \(ancestor) is not searchable, and granting o+x failed: \(String(cString: strerror(errno))). Choose a data directory outside \(ancestor).")
            }
            logger.notice("granted search permission (chmod o+x) on \(ancestor) so that the PostgreSQL system user \(name) can reach \(path); PostgreSQL refuses to run as root. Nothing in \(ancestor) became listable or readable.")
        }
    }

    private static func lookUp(_ name: String) -> PostgresServerUser? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return PostgresServerUser(name: name, userID: entry.pw_uid, groupID: entry.pw_gid, needsSwitch: true)
    }

    static func executable(_ name: String) throws -> String {
        let directories = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        guard let path = directories.map({ $0 + "/" + name }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw PostgresError(kind: .connection, message: "\(name) not found in \(directories.joined(separator: ", ")); install the Debian package that provides it (util-linux for runuser, passwd for useradd)")
        }
        return path
    }
}
