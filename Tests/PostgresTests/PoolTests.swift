import FerryTestSupport
import Foundation
import Glibc
@testable import Postgres
import Testing

@Suite struct PoolTests {
    struct Visit: Sendable {
        var threadName: String
        var isMainThread: Bool
        var backendPID: Int32
    }

    @Test func servesMoreCallersThanConnectionsOnItsOwnThreads() async throws {
        try await withTestPool(size: 3) { pool, _ in
            let visits = try await withThrowingTaskGroup(of: Visit.self) { group in
                for _ in 0..<24 {
                    group.addTask {
                        try await pool.withConnection { connection in
                            try connection.execute("SELECT pg_sleep(0.02)")
                            return Visit(threadName: currentThreadName(), isMainThread: Thread.isMainThread, backendPID: connection.backendPID)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(visits.count == 24)
            #expect(visits.allSatisfy { !$0.isMainThread })
            let names = Set(visits.map(\.threadName))
            #expect(names.isSubset(of: ["ferry-pg-1", "ferry-pg-2", "ferry-pg-3"]), "threads: \(names)")
            #expect(Set(visits.map(\.backendPID)).count <= 3)
            // Busy connections made the others queue: more than one thread took part.
            #expect(names.count > 1)
        }
    }

    @Test func opensConnectionsLazily() async throws {
        try await withTestPool(size: 4) { pool, _ in
            let sessions = try await pool.withConnection { connection in
                try connection.query("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'postgres-tests' AND datname = current_database()")
                    .onlyRow().decode("n", as: Int.self)
            }
            #expect(sessions == 1)
        }
    }

    @Test func replacesAConnectionTheServerTerminated() async throws {
        try await withTestPool(size: 1) { pool, conninfo in
            let firstPID = try await pool.withConnection { $0.backendPID }
            // Terminated from another session while the pool's connection sits idle.
            try await terminate(backend: firstPID, conninfo: conninfo)

            let (secondPID, answer) = try await pool.withConnection { connection in
                (connection.backendPID, try connection.query("SELECT 41 + 1 AS n").onlyRow().decode("n", as: Int.self))
            }
            #expect(answer == 42)
            #expect(secondPID != firstPID)
        }
    }

    @Test func aQueryThatLosesItsConnectionFailsAndTheNextCallSucceeds() async throws {
        try await withTestPool(size: 1) { pool, conninfo in
            let error = try await #require(throws: PostgresError.self) {
                try await pool.withConnection { connection in
                    // The backend is terminated while this statement runs.
                    let killer = try PostgresConnection.connect(conninfo)
                    defer { killer.close() }
                    let pid = Int(connection.backendPID)
                    try killer.execute("SELECT pg_terminate_backend($1::int)", [pid])
                    try waitUntilGone(pid, killer)
                    try connection.execute("SELECT 1")
                }
            }
            #expect(error.isConnectionLoss)
            let answer = try await pool.withConnection { try $0.query("SELECT 1 AS n").onlyRow().decode("n", as: Int.self) }
            #expect(answer == 1)
        }
    }

    @Test func blockingCallersBorrowAConnection() async throws {
        try await withTestPool(size: 1) { pool, _ in
            let outcome = try await onOwnThread {
                let caller = currentThreadName()
                return try pool.withConnectionBlocking { connection in
                    (caller, currentThreadName(), try connection.query("SELECT 'lent' AS v").onlyRow().decode("v", as: String.self))
                }
            }
            // The body runs on the caller's own thread, with the connection lent by a pool thread.
            #expect(outcome.0 == outcome.1)
            #expect(!outcome.1.hasPrefix("ferry-pg"))
            #expect(outcome.2 == "lent")
            // Nesting a blocking call inside a pool body would deadlock a full pool: refused.
            let nested = try await #require(throws: PostgresError.self) {
                try await pool.withConnection { _ in try pool.withConnectionBlocking { _ in 1 } }
            }
            #expect(nested.kind == .query)
        }
    }

    @Test func closedPoolRefusesWork() async throws {
        let conninfo = try await TestPostgres.makeDatabase()
        let pool = PostgresPool(configuration: PostgresPoolConfiguration(conninfo: conninfo, size: 2), logger: testLogger)
        #expect(try await pool.withConnection { try $0.query("SELECT 1 AS n").onlyRow().decode("n", as: Int.self) } == 1)
        await pool.close()
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection { _ in 1 }
        }
        #expect(error.kind == .poolClosed)
    }

    @Test func unreachableServerGivesAnErrorInsteadOfHanging() async throws {
        let pool = PostgresPool(
            configuration: PostgresPoolConfiguration(
                conninfo: "host=/tmp/ferry-no-such-socket-dir port=1 dbname=x user=x", size: 1, connectTimeout: .milliseconds(600)
            ),
            logger: testLogger
        )
        let started = ContinuousClock.now
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection { _ in 1 }
        }
        #expect(error.kind == .connection)
        #expect(ContinuousClock.now - started < .seconds(5))
        await pool.close()
    }
}

/// Terminates a backend from a separate session and waits until it is gone.
func terminate(backend pid: Int32, conninfo: String) async throws {
    try await onOwnThread {
        let killer = try PostgresConnection.connect(conninfo)
        defer { killer.close() }
        try killer.execute("SELECT pg_terminate_backend($1::int)", [Int(pid)])
        try waitUntilGone(Int(pid), killer)
    }
}

/// Runs blocking test work on a thread of its own, as a caller with its own thread would.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try work() })
        }.start()
    }
}

/// `ServerContact`: whether a unit of work's calls reached the server, so that a failure to
/// connect can tell whether anything of the work was done.
@Suite struct ServerContactTests {
    @Test func marksOnlyCallsThatGotAConnection() async throws {
        try await withTestPool(size: 1) { pool, _ in
            let contact = ServerContact()
            let untouched = ServerContact()
            try await ServerContact.$current.withValue(contact) {
                #expect(contact.hasReachedServer == false)
                try await pool.withConnection { connection in try connection.execute("SELECT 1") }
            }
            #expect(contact.hasReachedServer)
            #expect(untouched.hasReachedServer == false, "only the bound contact is marked")

            // A pool that cannot connect marks nothing.
            let unreachable = PostgresPool(
                configuration: PostgresPoolConfiguration(conninfo: "host=/nonexistent dbname=none connect_timeout=1", size: 1, connectTimeout: .milliseconds(50)),
                logger: testLogger
            )
            let failed = ServerContact()
            await #expect(throws: PostgresError.self) {
                try await ServerContact.$current.withValue(failed) {
                    try await unreachable.withConnection { connection in try connection.execute("SELECT 1") }
                }
            }
            #expect(failed.hasReachedServer == false)
            await unreachable.close()
        }
    }
}

/// While the server is known to be away, a call whose unit of work tracks its contact (an API
/// request, whose client waits) gets one attempt, not the whole `connectTimeout`.
@Suite struct FastFailTests {
    @Test func requestsFailAtOnceWhileTheServerIsKnownAway() async throws {
        let unreachable = PostgresPool(
            configuration: PostgresPoolConfiguration(conninfo: "host=/nonexistent dbname=none", size: 2, connectTimeout: .seconds(2)),
            logger: testLogger
        )
        func attempt(tracked: Bool) async -> Duration {
            let started = ContinuousClock.now
            let call = { _ = try? await unreachable.withConnection { connection in try connection.execute("SELECT 1") } }
            if tracked { await ServerContact.$current.withValue(ServerContact()) { await call() } } else { await call() }
            return ContinuousClock.now - started
        }
        // Nothing known yet: the first request rides out the whole deadline, as any call does.
        #expect(await attempt(tracked: true) >= .seconds(1))
        // Known away now: a request fails at once; a call of the engine's (untracked) still waits.
        #expect(await attempt(tracked: true) < .milliseconds(500))
        #expect(await attempt(tracked: false) >= .seconds(1))
        await unreachable.close()
    }

    @Test func aStoppingProcessDoesNotWaitOutAnAbsentServer() async throws {
        let unreachable = PostgresPool(
            configuration: PostgresPoolConfiguration(conninfo: "host=/nonexistent dbname=none", size: 1, connectTimeout: .seconds(4)),
            logger: testLogger
        )
        func attempt() async -> Duration {
            let started = ContinuousClock.now
            _ = try? await unreachable.withConnection { connection in try connection.execute("SELECT 1") }
            return ContinuousClock.now - started
        }
        // A call waiting out the server when the process begins to stop gives up then.
        async let waiting = attempt()
        try await Task.sleep(for: .milliseconds(300))
        unreachable.beginStopping(patience: .milliseconds(800))
        let first = await waiting
        // (It gives up once its next pause would end past that point: before the 1.1 s.)
        #expect(first >= .milliseconds(300) && first < .seconds(2), "waited \(first) of the 4 s connectTimeout")
        // Known away now: one attempt for any call (here an engine's, untracked).
        #expect(await attempt() < .milliseconds(400))
        await unreachable.close()

        // A call asked for well after the stopping began still gets its patience (a restart of a
        // second or two is waited out), not one attempt.
        let later = PostgresPool(
            configuration: PostgresPoolConfiguration(conninfo: "host=/nonexistent dbname=none", size: 1, connectTimeout: .seconds(4)),
            logger: testLogger
        )
        later.beginStopping(patience: .milliseconds(800))
        try await Task.sleep(for: .seconds(1))
        let started = ContinuousClock.now
        _ = try? await later.withConnection { connection in try connection.execute("SELECT 1") }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300) && waited < .seconds(2), "waited \(waited)")
        await later.close()
    }

    @Test func aLiveConnectionEndsTheFastFailing() async throws {
        try await withTestPool(size: 1) { pool, _ in
            // As if a worker had just given up (a moment of max_connections, say)...
            pool.shared.gaveUpConnecting.withLock { $0 = .now }
            #expect(pool.shared.connectDeadline(for: ServerContact()) <= .now, "a request gets one attempt")
            // ...and then a call ran on a live connection: the server is not away.
            try await pool.withConnection { connection in try connection.execute("SELECT 1") }
            #expect(pool.shared.connectDeadline(for: ServerContact()) > .now + .seconds(1))
            let reached = ServerContact()
            pool.shared.gaveUpConnecting.withLock { $0 = .now }
            try await ServerContact.$current.withValue(reached) {
                try await pool.withConnection { connection in try connection.execute("SELECT 1") }
            }
            pool.shared.gaveUpConnecting.withLock { $0 = .now }
            #expect(pool.shared.connectDeadline(for: reached) > .now + .seconds(1), "a request that reached the server waits like any call")
        }
    }
}
