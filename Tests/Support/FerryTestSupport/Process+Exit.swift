import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Process {
    /// The child's exit status once it has exited (its exit code, or the signal that ended it, as
    /// Foundation's `terminationStatus`), nil while it runs. Asks the kernel without reaping.
    ///
    /// Not `isRunning`: Foundation on Linux learns of an exit only when a socket it hands the child
    /// reaches end-of-file, and that socket is not close-on-exec. A child launched by another
    /// thread at the same moment can inherit it, and `isRunning` then stays true until that
    /// other child exits too: an instance killed with SIGKILL looked alive for as long as the
    /// instance started beside it kept running.
    public var exitStatus: Int32? {
        var info = siginfo_t()
        if waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT) == 0 {
            let child = info._sifields._sigchld
            return child.si_pid == processIdentifier ? child.si_status : nil
        }
        // ECHILD: Foundation has reaped it, and sets `isRunning` right after.
        return isRunning ? nil : terminationStatus
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
