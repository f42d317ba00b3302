import FerryTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One `ferry serve` child process, configured only through its environment as an operator
/// would, with its standard output and error in a log file that failure messages quote.
final class FerryInstance: Sendable {
    struct Configuration: Sendable {
        /// nil: no `DATABASE_URL`, so Ferry runs its embedded cluster under `dataDirectory`.
        var databaseURL: String?
        var dataDirectory: String
        var port: Int
        var instanceID: String
        /// nil: no `FERRY_ADMIN_TOKEN`, so the first start generates one and prints it.
        var adminToken: String? = "e2e-operator-token"
        var logDirectory: String
        var extraEnvironment: [String: String] = [:]
    }

    let configuration: Configuration
    let logPath: String
    private let process: Process

    var baseURL: String { "http://127.0.0.1:\(configuration.port)" }
    var processID: pid_t { process.processIdentifier }
    var isRunning: Bool { process.exitStatus == nil }

    private static let launchCounter = Atomic<Int>(0)

    /// Launches the process; it is not ready until `waitUntilReady` returns.
    init(_ configuration: Configuration) throws {
        self.configuration = configuration
        let number = Self.launchCounter.wrappingAdd(1, ordering: .relaxed).newValue
        logPath = (configuration.logDirectory as NSString).appendingPathComponent("\(configuration.instanceID)-\(number).log")
        guard FileManager.default.createFile(atPath: logPath, contents: nil), let log = FileHandle(forWritingAtPath: logPath) else {
            throw HarnessError("cannot create the log file \(logPath)")
        }
        defer { try? log.close() }
        process = Process()
        process.executableURL = URL(fileURLWithPath: try FerryBinary.path())
        process.arguments = ["serve"]
        process.environment = Self.environment(for: configuration)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.runOneAtATime()
    }

    deinit {
        if isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// The parent's environment without any Ferry setting, plus this instance's.
    static func environment(for configuration: Configuration) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") && $0.key != "DATABASE_URL" }
        environment["FERRY_DATA_DIR"] = configuration.dataDirectory
        environment["FERRY_PORT"] = String(configuration.port)
        environment["FERRY_HOST"] = "127.0.0.1"
        environment["FERRY_ALLOW_NETWORKS"] = "127.0.0.0/8"
        if let adminToken = configuration.adminToken { environment["FERRY_ADMIN_TOKEN"] = adminToken }
        environment["FERRY_INSTANCE_ID"] = configuration.instanceID
        environment["FERRY_WORKERS"] = "2"
        // The machine's free space is shared and moves (CI machines have been seen with a few
        // hundred MiB free): a small reserve, so tests do not depend on it.
        environment["FERRY_DISK_RESERVE_BYTES"] = String(16 * 1024 * 1024)
        if let databaseURL = configuration.databaseURL { environment["DATABASE_URL"] = databaseURL }
        environment.merge(configuration.extraEnvironment) { $1 }
        return environment
    }

    /// Waits until `GET /readyz` answers 200; throws with the log if the process exits first.
    func waitUntilReady(timeout: Duration = .seconds(30)) async throws {
        let probe = FerryClient(baseURL: baseURL, token: nil, requestTimeout: 2)
        let ready = try await eventually(timeout: timeout, every: .milliseconds(100)) { () -> Bool? in
            if let status = process.exitStatus {
                throw HarnessError("ferry \(configuration.instanceID) exited (status \(status)) before it was ready.\n\(logTail())")
            }
            return (try? await probe.readiness().status) == 200 ? true : nil
        }
        guard ready != nil else {
            throw HarnessError("ferry \(configuration.instanceID) was not ready within \(timeout).\n\(logTail())")
        }
    }

    /// SIGTERM, then waits for the exit; returns how long it took and the exit status.
    /// Throws (after a SIGKILL) if it does not exit within `timeout`.
    func terminate(timeout: Duration = .seconds(15)) async throws -> (elapsed: Duration, status: Int32) {
        let start = ContinuousClock.now
        Glibc.kill(process.processIdentifier, SIGTERM)
        guard let status = try await process.exitStatus(within: timeout) else {
            Glibc.kill(process.processIdentifier, SIGKILL)
            throw HarnessError("ferry \(configuration.instanceID) did not exit within \(timeout) of SIGTERM.\n\(logTail())")
        }
        return (ContinuousClock.now - start, status)
    }

    /// SIGKILL, as a crash or the OOM killer would, and waits until the process is gone.
    func kill() async throws {
        Glibc.kill(process.processIdentifier, SIGKILL)
        guard try await process.exitStatus(within: .seconds(10)) != nil else {
            throw HarnessError("ferry \(configuration.instanceID) survived SIGKILL for 10 s (kernel state \(process.kernelState))")
        }
    }

    /// SIGKILL without waiting: cleanup after a failed test.
    func killNow() {
        if isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// The last lines the process wrote, for failure messages.
    func logTail(lines: Int = 40) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "(no log at \(logPath))"
        let tail = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
        return "--- last lines of \(logPath) ---\n\(tail)"
    }

    /// Everything the process wrote so far.
    func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }
}
