import Foundation

/// Reads `/proc` to tell whether processes are alive: the end-to-end tests check that Ferry
/// stops the PostgreSQL it started.
enum ProcessTable {
    /// Processes whose command line mentions `text` (the postmaster runs with `-D <dir>`).
    static func processes(mentioning text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry), let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let commandLine = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            return commandLine.contains(text) ? pid : nil
        }
    }

    /// Whether `pid` exists and is not a zombie.
    static func isAlive(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        guard let close = status.lastIndex(of: ")") else { return true }
        let state = status[status.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z"
    }

    /// The postmaster's pid, from the first line of `postmaster.pid` in its data directory.
    static func postmaster(of dataDirectory: String) -> Int32? {
        guard let text = try? String(contentsOfFile: (dataDirectory as NSString).appendingPathComponent("postmaster.pid"), encoding: .utf8) else {
            return nil
        }
        return text.split(separator: "\n").first.flatMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
    }
}
