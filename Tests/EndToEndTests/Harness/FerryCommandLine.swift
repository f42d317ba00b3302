import FerryTestSupport
import Foundation

/// Runs a `ferry` command other than `serve` (`migrate`, `tenant create`) to completion, with
/// the same kind of environment as the server, and returns what it printed.
enum FerryCommandLine {
    struct Result: Sendable {
        var status: Int32
        var output: String
    }

    /// `environment`: variables set on top (the test process's own FERRY_* are never passed on).
    static func run(
        _ arguments: [String], databaseURL: String?, dataDirectory: String, environment extra: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) async throws -> Result {
        let folder = try TestScratch.folder(named: "cli")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outputPath = folder + "/output.log"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil), let output = FileHandle(forWritingAtPath: outputPath) else {
            throw HarnessError("cannot create \(outputPath)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FerryBinary.path())
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") && $0.key != "DATABASE_URL" }
        environment["FERRY_DATA_DIR"] = dataDirectory
        if let databaseURL { environment["DATABASE_URL"] = databaseURL }
        environment.merge(extra) { _, set in set }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.runOneAtATime()
        try? output.close()
        let status = try await process.exitStatus(within: timeout)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard let status else {
            process.terminate()
            throw HarnessError("ferry \(arguments.joined(separator: " ")) did not finish within \(timeout):\n\(text)")
        }
        return Result(status: status, output: text)
    }
}
