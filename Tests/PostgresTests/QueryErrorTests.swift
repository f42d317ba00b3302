import Postgres
import Testing

@Suite struct QueryErrorTests {
    @Test func parametersAreNeverInterpolated() async throws {
        try await withTestPool { pool, _ in
            let injection = "x'); DROP TABLE notes; --"
            let (echoed, stored, tableCount) = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE notes (body text NOT NULL)")
                let echoed = try connection.query("SELECT $1 AS v", [injection]).onlyRow().decode("v", as: String.self)
                try connection.execute("INSERT INTO notes VALUES ($1)", [injection])
                let stored = try connection.query("SELECT body FROM notes").onlyRow().decode("body", as: String.self)
                let tables = try connection.query("SELECT count(*) AS n FROM pg_tables WHERE tablename = 'notes'").onlyRow().decode("n", as: Int.self)
                return (echoed, stored, tables)
            }
            #expect(echoed == injection)
            #expect(stored == injection)
            #expect(tableCount == 1)
        }
    }

    @Test func aMissingFirstRowThrowsInsteadOfTrapping() async throws {
        try await withTestPool { pool, _ in
            let (one, none) = try await pool.withConnection { connection in
                (try connection.query("SELECT 7").firstRow().decode(0, as: Int.self),
                 Result { try connection.query("SELECT 1 WHERE false").firstRow() })
            }
            #expect(one == 7)
            #expect(throws: PostgresError.self) { try none.get() }
        }
    }

    @Test func syntaxErrorCarriesSQLState() async throws {
        try await withTestPool { pool, _ in
            let error = try await #require(throws: PostgresError.self) {
                try await pool.withConnection { connection in try connection.execute("SELEC 1") }
            }
            #expect(error.kind == .query)
            #expect(error.sqlState == "42601")
            #expect(!error.isUniqueViolation)
            #expect(!error.isConnectionLoss)
            #expect(error.description.contains("42601"))
        }
    }

    @Test func uniqueViolationKeepsTheValueOutOfDescription() async throws {
        try await withTestPool { pool, _ in
            let secret = "alice-secret@example.com"
            let error = try await #require(throws: PostgresError.self) {
                try await pool.withConnection { connection in
                    try connection.execute("CREATE TABLE accounts (email text CONSTRAINT accounts_email_key UNIQUE)")
                    try connection.execute("INSERT INTO accounts VALUES ($1)", [secret])
                    try connection.execute("INSERT INTO accounts VALUES ($1)", [secret])
                }
            }
            #expect(error.kind == .query)
            #expect(error.sqlState == "23505")
            #expect(error.isUniqueViolation)
            #expect(error.constraint == "accounts_email_key")
            #expect(error.detail?.contains(secret) == true)
            #expect(!error.description.contains(secret))
            #expect(error.description.contains("accounts_email_key"))
            #expect(error.debugDescription.contains(secret))
        }
    }

    @Test func invalidInputMessageIsWithheldFromDescription() async throws {
        try await withTestPool { pool, _ in
            let secret = "tok_live_9f8e7d"
            let error = try await #require(throws: PostgresError.self) {
                try await pool.withConnection { connection in try connection.query("SELECT $1::int AS n", [secret]) }
            }
            #expect(error.sqlState == "22P02")
            #expect(error.message.contains(secret))  // the server quotes it…
            #expect(!error.description.contains(secret))  // …so description does not repeat the message
            #expect(error.debugDescription.contains(secret))
        }
    }

    @Test func textWithNULIsRefusedNotTruncated() async throws {
        try await withTestPool { pool, _ in
            let error = try await #require(throws: PostgresError.self) {
                try await pool.withConnection { connection in try connection.query("SELECT $1::text", ["before\u{0}after"]) }
            }
            #expect(error.kind == .query)
            #expect(error.description.contains("$1"))
            #expect(!error.description.contains("before"))
        }
    }

    @Test func textArrayElementWithNULIsRefused() async throws {
        try await withTestPool { pool, _ in
            let error = try await #require(throws: PostgresError.self) {
                try await pool.withConnection { connection in
                    try connection.query("SELECT $1::int8, $2::text[]", [Int64(1), ["fine", "before\u{0}after"]])
                }
            }
            #expect(error.kind == .query)
            #expect(error.description.contains("$2"))
            #expect(!error.description.contains("before"))
        }
    }

    @Test func scriptRunsSeveralStatementsAndCountsAreReported() async throws {
        try await withTestPool { pool, _ in
            let (updated, count, emptyAffected) = try await pool.withConnection { connection in
                try connection.executeScript("""
                    CREATE TABLE items (id int PRIMARY KEY, state text NOT NULL);
                    INSERT INTO items SELECT g, 'new' FROM generate_series(1, 5) g;
                    """)
                let updated = try connection.execute("UPDATE items SET state = $1 WHERE id <= $2", ["done", 3])
                let rows = try connection.query("SELECT id FROM items ORDER BY id")
                let nothing = try connection.query("SELECT id FROM items WHERE false")
                return (updated, rows.map { try? $0.decode("id", as: Int.self) }, nothing.affectedRows)
            }
            #expect(updated == 3)
            #expect(count == [1, 2, 3, 4, 5])
            #expect(emptyAffected == 0)
        }
    }
}
