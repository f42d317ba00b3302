import FerryTestSupport
import Foundation

extension Process {
    /// The exit status once the child has exited (see `exitStatus`), nil if it still runs after
    /// `timeout`; polls without holding a thread.
    func exitStatus(within timeout: Duration) async throws -> Int32? {
        try await eventually(timeout: timeout, every: .milliseconds(10)) { exitStatus }
    }
}
