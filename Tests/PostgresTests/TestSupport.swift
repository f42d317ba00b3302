import Foundation
import FerryTestSupport
import Glibc
import Logging
import Postgres
import Synchronization

/// A pool on a fresh database (closed afterwards). libpq blocks, so tests run their statements
/// through the pool's threads rather than on the test's cooperative thread. `options`: server
/// settings for the pool's sessions (libpq's `options`, such as `-c synchronous_commit=on`).
func withTestPool(size: Int = 2, options: String? = nil, _ body: (PostgresPool, String) async throws -> Void) async throws {
    let conninfo = try await TestPostgres.makeDatabase() + (options.map { " options='\($0)'" } ?? "")
    let pool = PostgresPool(configuration: PostgresPoolConfiguration(conninfo: conninfo, size: size, applicationName: "postgres-tests"), logger: testLogger)
    do {
        try await body(pool, conninfo)
        await pool.close()
    } catch {
        await pool.close()
        throw error
    }
}

let testLogger: Logger = {
    var logger = Logger(label: "ferry.postgres-tests")
    logger.logLevel = .critical
    return logger
}()

/// The calling thread's name as the kernel knows it.
func currentThreadName() -> String {
    let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return comm.trimmingCharacters(in: .newlines)
}

struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Collects what an AsyncStream yields, so a test can wait for a condition with a time limit
/// instead of hanging on a stream that never delivers.
final class EventRecorder<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])

    init<Events: AsyncSequence & Sendable>(_ stream: Events) where Events.Element == Event, Events.Failure == Never {
        Task { [self] in
            for await event in stream {
                events.withLock { $0.append(event) }
            }
        }
    }

    var recorded: [Event] { events.withLock { $0 } }

    func wait(for what: String, seconds: Double = 15, until condition: ([Event]) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition(recorded) {
            guard ContinuousClock.now < deadline else { throw TimedOut(what: what) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

struct UnexpectedRowCount: Error, CustomStringConvertible {
    var count: Int
    var description: String { "expected exactly one row, got \(count)" }
}

extension PostgresRows {
    /// The one row of a single-row result. Throws (rather than `#require`) because it runs on a
    /// pool thread, outside the test's task.
    func onlyRow() throws -> PostgresRow {
        guard count == 1, let row = first else { throw UnexpectedRowCount(count: count) }
        return row
    }
}
