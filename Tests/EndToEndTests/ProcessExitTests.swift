import FerryTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The harness decides that an instance is gone by asking the kernel, not Foundation.
@Suite("Process exit as the harness sees it")
struct ProcessExitTests {
    /// The shell leaves a background `sleep` holding every descriptor it inherited, among them
    /// Foundation's exit socket, which is what a child launched at the same moment by another
    /// thread does by accident. Foundation then reports the killed shell as running.
    @Test("a killed child is seen as exited while another process still holds Foundation's exit socket", .timeLimit(.minutes(1)))
    func exitSeenDespiteAnInheritedSocket() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "sleep 30 & echo $! ; wait"]
        let output = Pipe()
        process.standardOutput = output
        try process.runOneAtATime()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let holder = try #require(Int32(line.trimmingCharacters(in: .whitespacesAndNewlines)), "no pid printed: \(line)")
        defer { kill(holder, SIGKILL) }

        #expect(process.exitStatus == nil)
        kill(process.processIdentifier, SIGKILL)
        let status = try await process.exitStatus(within: .seconds(5))
        #expect(status == SIGKILL)
        #expect(process.isRunning, "Foundation saw the exit after all; this test no longer shows why the harness does not trust isRunning")
    }
}
