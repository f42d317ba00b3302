import Foundation
import Glibc
import Testing

@testable import ferry

@Suite("The embedded cluster's owner counts as alive only while it runs")
struct OwnerLivenessTests {
    @Test("a child that exited but was not reaped (a zombie) is not running; a sleeping one is")
    func zombiesAreNotRunning() throws {
        let exited = try spawn("/bin/true")
        let sleeping = try spawn("/bin/sleep", "30")
        defer {
            Glibc.kill(sleeping, SIGKILL)
            var status: Int32 = 0
            waitpid(exited, &status, 0)
            waitpid(sleeping, &status, 0)
        }
        // Not reaped: its /proc entry stays, in state Z, until waitpid.
        let deadline = ContinuousClock.now + .seconds(5)
        while DatabaseLauncher.isRunning(exited), ContinuousClock.now < deadline { usleep(10_000) }
        #expect(!DatabaseLauncher.isRunning(exited))
        #expect(FileManager.default.fileExists(atPath: "/proc/\(exited)/stat"), "the child was reaped: no zombie to check")
        #expect(DatabaseLauncher.isRunning(sleeping))
        #expect(DatabaseLauncher.isRunning(getpid()))
    }

    /// Starts `path` without anyone waiting for it (Foundation's Process would reap it).
    private func spawn(_ path: String, _ arguments: String...) throws -> pid_t {
        var pid: pid_t = 0
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let result = posix_spawn(&pid, path, nil, nil, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return pid
    }
}
