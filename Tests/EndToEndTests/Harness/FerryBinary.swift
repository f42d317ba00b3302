import Foundation

/// Where the `ferry` executable under test is: SwiftPM builds it next to the test bundle
/// (`<scratch>/<triple>/debug/ferry`) because this target depends on it.
enum FerryBinary {
    struct Missing: Error, CustomStringConvertible {
        var searched: [String]

        var description: String {
            "The ferry executable was not found (looked at \(searched.joined(separator: ", "))). "
                + "Build it with `swift build --build-tests`, or set FERRY_BINARY to its path."
        }
    }

    /// The executable's path: `$FERRY_BINARY` when set, else `ferry` in the directory of the
    /// running test bundle (from `CommandLine.arguments[0]`, then `/proc/self/exe`).
    static func path() throws -> String {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["FERRY_BINARY"], !explicit.isEmpty {
            candidates.append(explicit)
        }
        for launcher in [CommandLine.arguments.first, try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")] {
            guard let launcher, !launcher.isEmpty else { continue }
            var directory = URL(fileURLWithPath: launcher).deletingLastPathComponent()
            // On Linux the bundle is a single executable; elsewhere it may sit inside `X.xctest/Contents/MacOS`.
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("ferry").path)
                directory = directory.deletingLastPathComponent()
            }
        }
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue {
                return candidate
            }
        }
        throw Missing(searched: candidates)
    }
}
