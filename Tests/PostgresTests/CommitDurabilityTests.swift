import FerryTestSupport
@testable import Postgres
import Testing

@Suite struct CommitDurabilityTests {
    /// Sessions that commit durably by default: the tests' server does not
    /// (`synchronous_commit = off`, for speed).
    static let durable = "-c synchronous_commit=on"

    static let show = { @Sendable (connection: PostgresConnection) in
        try connection.query("SHOW synchronous_commit").onlyRow().decode(0, as: String.self)
    }

    /// One connection serves both kinds of call in turn: each sees the setting it asked for,
    /// whatever the call before it left.
    @Test func eachCallCommitsAsItAsked() async throws {
        try await withTestPool(size: 1, options: Self.durable) { pool, _ in
            let show = Self.show
            var seen: [String] = []
            seen.append(try await pool.withConnection(show))
            seen.append(try await pool.withConnection(commit: .asynchronous, show))
            seen.append(try await pool.withConnection(commit: .asynchronous, show))
            // SET LOCAL: a transaction leaves the session as it was (here asynchronous).
            seen.append(try await pool.withTransaction(show))
            seen.append(try await pool.withConnection(commit: .asynchronous, show))
            seen.append(try await pool.withConnection(show))
            seen.append(try await pool.withTransaction(commit: .asynchronous, show))
            seen.append(try await pool.withConnection(show))
            seen.append(try await pool.withConnection(commit: .asynchronous, show))
            seen.append(try pool.withConnectionBlocking(show))
            #expect(seen == ["on", "off", "off", "on", "off", "on", "off", "on", "off", "on"])
            // The session was left as each call's kind wants it: no SET or RESET for the transactions.
            let afterDurable = try await pool.withTransaction { $0.commitsAsynchronously }
            _ = try await pool.withConnection(commit: .asynchronous, show)
            let afterAsynchronous = try await pool.withTransaction { $0.commitsAsynchronously }
            #expect(!afterDurable)
            #expect(afterAsynchronous)
        }
    }

    /// A read-only call sends nothing about commits: it finds the session as the call before it left it.
    @Test func aReadOnlyCallLeavesTheSessionAlone() async throws {
        try await withTestPool(size: 1, options: Self.durable) { pool, _ in
            var seen: [String] = []
            seen.append(try await pool.withConnection(commit: .readOnly, Self.show))
            _ = try await pool.withConnection(commit: .asynchronous, Self.show)
            seen.append(try await pool.withConnection(commit: .readOnly, Self.show))
            seen.append(try await pool.withTransaction(commit: .readOnly, Self.show))
            _ = try await pool.withConnection(Self.show)
            seen.append(try await pool.withConnection(commit: .readOnly, Self.show))
            #expect(seen == ["on", "off", "off", "on"])
        }
    }

    /// An asynchronous transaction that failed and rolled back leaves the session as it was:
    /// the calls after it see what they ask for.
    @Test func aRolledBackTransactionLeavesTheSettingAsAsked() async throws {
        try await withTestPool(size: 1, options: Self.durable) { pool, _ in
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
            let after = [try await pool.withConnection(commit: .asynchronous, Self.show), try await pool.withConnection(Self.show)]
            #expect(after == ["off", "on"])
        }
    }
}
