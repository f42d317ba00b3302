import FerryTestSupport
@testable import Postgres
import Testing

@Suite struct CommitDurabilityTests {
    /// One connection serves both kinds of call in turn: each sees the setting it asked for,
    /// whatever the call before it left.
    @Test func eachCallCommitsAsItAsked() async throws {
        try await withDurablePool { pool in
            let show = { @Sendable (connection: PostgresConnection) in
                try connection.query("SHOW synchronous_commit").onlyRow().decode(0, as: String.self)
            }
            var seen: [String] = []
            seen.append(try await pool.withConnection(show))
            seen.append(try await pool.withConnection(commit: .asynchronous, show))
            seen.append(try await pool.withConnection(commit: .asynchronous, show))
            seen.append(try await pool.withTransaction(show))
            seen.append(try await pool.withTransaction(commit: .asynchronous, show))
            // SET LOCAL: the asynchronous transaction leaves the session as it was.
            seen.append(try await pool.withConnection(show))
            seen.append(try await pool.withConnection(commit: .asynchronous, show))
            seen.append(try pool.withConnectionBlocking(show))
            #expect(seen == ["on", "off", "off", "on", "off", "on", "off", "on"])
        }
    }

    /// An asynchronous transaction that failed and rolled back leaves the session as it was:
    /// the calls after it see what they ask for.
    @Test func aRolledBackTransactionLeavesTheSettingAsAsked() async throws {
        try await withDurablePool { pool in
            let failed: Bool
            do {
                try await pool.withTransaction(commit: .asynchronous) { connection in
                    try connection.execute("SELECT 1 / 0")
                }
                failed = false
            } catch {
                failed = true
            }
            #expect(failed)
            let setting = try await pool.withConnection(commit: .asynchronous) { connection in
                try connection.query("SHOW synchronous_commit").onlyRow().decode(0, as: String.self)
            }
            #expect(setting == "off")
            let durable = try await pool.withConnection { connection in
                try connection.query("SHOW synchronous_commit").onlyRow().decode(0, as: String.self)
            }
            #expect(durable == "on")
        }
    }

    /// A pool of one connection whose sessions commit durably by default: the tests' server
    /// does not (`synchronous_commit = off`, for speed).
    private func withDurablePool(_ body: (PostgresPool) async throws -> Void) async throws {
        let conninfo = try await TestPostgres.makeDatabase() + " options='-c synchronous_commit=on'"
        let pool = PostgresPool(configuration: PostgresPoolConfiguration(conninfo: conninfo, size: 1, applicationName: "postgres-tests"), logger: testLogger)
        do {
            try await body(pool)
            await pool.close()
        } catch {
            await pool.close()
            throw error
        }
    }
}
