import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Child processes of the test runner (Ferry instances, openssl, curl, python), launched and
/// watched without trusting Foundation's exit tracking.
///
/// Foundation's Process on Linux learns that a child exited when a socket it hands the child
/// reaches end-of-file, and that socket is not close-on-exec. A child launched by another thread
/// at the same moment can inherit it; `isRunning` and `waitUntilExit` then wait for that other
/// child too. CI saw an instance killed with SIGKILL look alive for as long as the instance
/// started beside it kept running.
extension Process {
    private static let launching = Mutex(())

    /// `run()`, with no other launch through here in between: no child of ours can inherit
    /// another's exit socket.
    public func runOneAtATime() throws {
        try Self.launching.withLock { _ in try run() }
    }

    /// The child's exit status once it has exited (its exit code, or the signal that ended it,
    /// as `terminationStatus` gives it), nil while it runs. Asks the kernel, without reaping.
    public var exitStatus: Int32? {
        var info = siginfo_t()
        if waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT) == 0 {
            let child = info._sifields._sigchld
            return child.si_pid == processIdentifier ? child.si_status : nil
        }
        // ECHILD: Foundation has reaped it, and sets `isRunning` right after.
        return isRunning ? nil : terminationStatus
    }

    /// Blocks the calling thread until the child exits; returns its exit status.
    @discardableResult
    public func waitForExitStatus() -> Int32 {
        while true {
            if let status = exitStatus { return status }
            usleep(2_000)
        }
    }

    /// The kernel's state letter for the child ("R", "S", "D" uninterruptible, "Z" exited but not
    /// yet reaped), for messages about a child that does not go away.
    public var kernelState: String {
        guard let stat = try? String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")")
        else { return "gone" }
        return String(stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).prefix(1))
    }
}
