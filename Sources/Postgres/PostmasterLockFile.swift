import Foundation
import Glibc

/// `postmaster.pid` in the data directory (and the `.s.PGSQL.<port>.lock` beside a socket): the
/// server's PID on the first line, then data directory, start time, port, socket directory, …
struct PostmasterLockFile {
    let path: String
    let lines: [String]

    init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        self.path = path
        lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    var processID: pid_t? { lines.first.flatMap { pid_t($0.trimmingCharacters(in: .whitespaces)) } }
    var port: Int? { lines.count > 3 ? Int(lines[3].trimmingCharacters(in: .whitespaces)) : nil }
    var socketDirectory: String? { lines.count > 4 ? lines[4].trimmingCharacters(in: .whitespaces) : nil }

    /// Whether the PID names a live PostgreSQL process. A PID a dead server left behind may have
    /// been reused by an unrelated process, so the process's name is checked too.
    var isServerAlive: Bool {
        guard let processID, processID > 0 else { return false }
        guard let name = FileManager.default.contents(atPath: "/proc/\(processID)/comm") else { return false }
        let command = String(decoding: name, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return command == "postgres" || command == "postmaster"
    }

    func remove() {
        unlink(path)
    }
}
