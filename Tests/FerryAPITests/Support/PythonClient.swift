import FerryTestSupport
import Foundation
import Testing

/// A real HTTP client outside the test process: a Python script (its standard library only),
/// for what clients other than Ferry's own tests do on a socket — urllib sending a whole body
/// before reading, a client trickling its request head.
enum PythonClient {
    /// Runs `script` with `arguments` and returns what it printed; a failing script fails the test.
    static func run(_ script: String, arguments: [String]) async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-python-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        // Files, not pipes (see `ReferenceVerifier`): no other child can hold them open.
        let outputURL = directory.appendingPathComponent("output")
        let errorsURL = directory.appendingPathComponent("errors")
        try Data().write(to: outputURL)
        try Data().write(to: errorsURL)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorsURL)
        try process.runOneAtATime()
        // Waiting blocks a thread: a thread of its own, not the cooperative pool.
        let status = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: process.waitForExitStatus()) }.start()
        }
        let printed = String(decoding: (try? Data(contentsOf: outputURL)) ?? Data(), as: UTF8.self)
        if status != 0 {
            let errors = String(decoding: (try? Data(contentsOf: errorsURL)) ?? Data(), as: UTF8.self)
            Issue.record("python3 exited with \(status): \(errors)")
        }
        return printed.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
