import FerryTestSupport
@testable import Postgres
import Testing

@Suite struct StatementPlansTests {
    static let show = { @Sendable (connection: PostgresConnection) in
        let plans = try connection.query("SHOW plan_cache_mode").onlyRow().decode(0, as: String.self)
        let scans = try connection.query("SHOW enable_seqscan").onlyRow().decode(0, as: String.self)
        return "\(plans) \(scans)"
    }
    static let server = "auto on"
    static let byKey = "force_generic_plan off"

    /// One connection serves both kinds of call in turn: each plans as it asked, whatever the call
    /// before it left; a transaction plans as the server chooses (or as its set-up says) and leaves
    /// the session as it was; a read-only call leaves it alone.
    @Test func eachCallPlansAsItAsked() async throws {
        try await withTestPool(size: 1) { pool, _ in
            let show = Self.show
            var seen: [String] = []
            seen.append(try await pool.withConnection(show))
            seen.append(try await pool.withConnection(commit: .asynchronous, plans: .byKeyPlannedOnce, show))
            seen.append(try await pool.withTransaction(show))
            seen.append(try await pool.withConnection(commit: .readOnly, show))
            seen.append(try await pool.withTransaction(setUp: "SET LOCAL plan_cache_mode TO force_generic_plan; SET LOCAL enable_seqscan TO off", show))
            seen.append(try await pool.withConnection(commit: .asynchronous, show))
            seen.append(try await pool.withConnection(plans: .byKeyPlannedOnce, show))
            seen.append(try pool.withConnectionBlocking(show))
            #expect(seen == [Self.server, Self.byKey, Self.server, Self.byKey, Self.byKey, Self.server, Self.byKey, Self.server])
            // The session was left as the last call wants it: no RESET for a transaction.
            _ = try await pool.withConnection(plans: .byKeyPlannedOnce, show)
            #expect(try await pool.withTransaction { $0.plansByKey })
        }
    }
}
