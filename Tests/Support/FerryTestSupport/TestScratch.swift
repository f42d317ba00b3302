import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Scratch folders for the tests of one process, all under /tmp/ferry-tests/<pid>.
///
/// Harnesses that each made a folder of their own in /tmp and never removed it once left
/// thousands there (1.5 GB) after a day of runs. The process's root is removed when the process
/// exits; a process killed before then leaves it to the next one, which on first use removes the
/// roots of processes that are gone. Whoever owns a folder for its whole life (a harness's `run`,
/// a test's `defer`) removes it sooner, so a long run does not fill the disk meanwhile.
public enum TestScratch {
    static let base = "/tmp/ferry-tests"
    private static let root = Result { try makeRoot() }

    /// A new, empty folder `<name>-<random>` in this process's root.
    public static func folder(named name: String) throws -> String {
        let folder = "\(try root.get())/\(name)-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        return folder
    }

    private static func makeRoot() throws -> String {
        // Shared by the test runs of every user, as /tmp itself is.
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o1777])
        removeRootsOfEndedProcesses()
        let root = "\(base)/\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: "\(TestScratch.base)/\(getpid())") }
        return root
    }

    /// Removes the roots whose process no longer runs (killed before its exit handler ran).
    private static func removeRootsOfEndedProcesses() {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        for entry in entries {
            guard let pid = pid_t(entry), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: "\(base)/\(entry)")
        }
    }
}
