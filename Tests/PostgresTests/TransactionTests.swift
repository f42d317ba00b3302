import Glibc
import Postgres
import Synchronization
import Testing

@Suite struct TransactionTests {
    struct Abort: Error {}

    private func count(_ pool: PostgresPool) async throws -> Int {
        try await pool.withConnection { try $0.query("SELECT count(*) AS n FROM ledger").onlyRow().decode("n", as: Int.self) }
    }

    @Test func commitsAndRollsBack() async throws {
        try await withTestPool { pool, _ in
            try await pool.withConnection { try $0.execute("CREATE TABLE ledger (amount int NOT NULL)") }

            let inserted = try await pool.withTransaction { connection in
                try connection.execute("INSERT INTO ledger VALUES (1), (2)")
            }
            #expect(inserted == 2)
            #expect(try await count(pool) == 2)

            await #expect(throws: Abort.self) {
                try await pool.withTransaction { connection in
                    try connection.execute("INSERT INTO ledger VALUES (3)")
                    throw Abort()
                }
            }
            #expect(try await count(pool) == 2)

            // A statement error that the body swallowed still rolls the whole transaction back.
            await #expect(throws: PostgresError.self) {
                try await pool.withTransaction { connection in
                    try connection.execute("INSERT INTO ledger VALUES (4)")
                    _ = try? connection.execute("INSERT INTO ledger VALUES (NULL)")
                }
            }
            #expect(try await count(pool) == 2)

            // The connection is clean afterwards: not left inside a transaction.
            let inTransaction = try await pool.withConnection { $0.isInTransaction }
            #expect(!inTransaction)
        }
    }

    @Test("a set-up statement sent with BEGIN holds for the transaction alone; one that fails leaves no transaction open")
    func setUpWithBegin() async throws {
        try await withTestPool(size: 1) { pool, _ in
            let inside = try await pool.withTransaction(setUp: "SELECT set_config('enable_seqscan', 'off', true)") { connection in
                try connection.query("SHOW enable_seqscan").onlyRow().decode(0, as: String.self)
            }
            #expect(inside == "off")
            let after = try await pool.withConnection { try $0.query("SHOW enable_seqscan").onlyRow().decode(0, as: String.self) }
            #expect(after == "on")

            let ran = Counter()
            await #expect(throws: PostgresError.self) {
                try await pool.withTransaction(setUp: "SELECT 1 / 0") { _ in ran.increment() }
            }
            #expect(ran.value == 0)
            let inTransaction = try await pool.withConnection { $0.isInTransaction }
            #expect(!inTransaction)
        }
    }

    @Test func connectionLostMidTransactionThrowsAndIsNotRetried() async throws {
        try await withTestPool(size: 1) { pool, conninfo in
            try await pool.withConnection { try $0.execute("CREATE TABLE ledger (amount int NOT NULL)") }
            let attempts = Counter()
            let error = try await #require(throws: PostgresError.self) {
                try await pool.withTransaction { connection in
                    attempts.increment()
                    try connection.execute("INSERT INTO ledger VALUES (1)")
                    let killer = try PostgresConnection.connect(conninfo)
                    defer { killer.close() }
                    try killer.execute("SELECT pg_terminate_backend($1::int)", [Int(connection.backendPID)])
                    try waitUntilGone(Int(connection.backendPID), killer)
                    try connection.execute("INSERT INTO ledger VALUES (2)")
                }
            }
            #expect(error.kind == .connection)
            #expect(error.isConnectionLoss)
            #expect(attempts.value == 1)
            #expect(try await count(pool) == 0)
        }
    }
}

/// Blocks until the backend `pid` has left pg_stat_activity (pg_terminate_backend only signals).
func waitUntilGone(_ pid: Int, _ connection: PostgresConnection) throws {
    for _ in 0..<500 {
        let alive = try connection.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1::int", [pid])
        if alive.isEmpty { return }
        usleep(10_000)
    }
    throw TimedOut(what: "backend \(pid) to exit")
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
