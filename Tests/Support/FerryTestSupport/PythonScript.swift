import Foundation

/// A Python script run to completion (`python3 -c`), for tests that want a peer outside the
/// test process. Its output is collected in files, not pipes: a pipe's write end inherited by a
/// child launched elsewhere at the same moment would keep the read waiting for that child.
/// Blocks the calling thread until the script exits.
public enum PythonScript {
    public struct Outcome: Sendable {
        public var status: Int32
        public var output: String
        public var errors: String
    }

    public static func run(_ script: String, arguments: [String]) throws -> Outcome {
        let directory = URL(fileURLWithPath: try TestScratch.folder(named: "python"))
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let outputURL = directory.appendingPathComponent("output")
        let errorsURL = directory.appendingPathComponent("errors")
        try Data().write(to: outputURL)
        try Data().write(to: errorsURL)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorsURL)
        try process.runOneAtATime()
        let status = process.waitForExitStatus()
        func read(_ url: URL) -> String { String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self) }
        return Outcome(status: status, output: read(outputURL), errors: read(errorsURL))
    }
}
