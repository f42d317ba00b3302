import FerryTestSupport
import Foundation
import Testing

/// A real HTTP client outside the test process: a Python script (its standard library only),
/// for what clients other than Ferry's own tests do on a socket — urllib sending a whole body
/// before reading, a client trickling its request head.
enum PythonClient {
    /// Runs `script` with `arguments` and returns what it printed; a failing script fails the test.
    static func run(_ script: String, arguments: [String]) async throws -> String {
        // Waiting blocks a thread: a thread of its own, not the cooperative pool.
        let outcome = try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try PythonScript.run(script, arguments: arguments) }) }.start()
        }
        if outcome.status != 0 {
            Issue.record("python3 exited with \(outcome.status): \(outcome.errors)")
        }
        return outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
