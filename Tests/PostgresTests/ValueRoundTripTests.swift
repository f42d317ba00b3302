import Foundation
import Postgres
import Testing

/// Every bindable and decodable type through a real server: bound as a parameter, cast to its SQL
/// type on the server, and read back from the text output.
@Suite struct ValueRoundTripTests {
    /// `SELECT $1::<type>` and decode the single value.
    private func echo<T: PostgresBindable & PostgresDecodable>(_ value: T, as sqlType: String, on pool: PostgresPool) async throws -> T {
        try await pool.withConnection { connection in
            let rows = try connection.query("SELECT $1::\(sqlType) AS value", [value])
            return try rows.onlyRow().decode("value", as: T.self)
        }
    }

    @Test func scalars() async throws {
        try await withTestPool { pool, _ async throws in
            #expect(try await echo("héllo wörld 🌍 ✓ 日本語", as: "text", on: pool) == "héllo wörld 🌍 ✓ 日本語")
            #expect(try await echo("", as: "text", on: pool) == "")
            #expect(try await echo(Int.max, as: "int8", on: pool) == Int.max)
            #expect(try await echo(Int.min, as: "int8", on: pool) == Int.min)
            #expect(try await echo(Int64(-42), as: "int8", on: pool) == -42)
            #expect(try await echo(Int32.max, as: "int4", on: pool) == Int32.max)
            #expect(try await echo(Int32.min, as: "int4", on: pool) == Int32.min)
            #expect(try await echo(Double.pi, as: "float8", on: pool) == Double.pi)
            #expect(try await echo(-1.5e-300, as: "float8", on: pool) == -1.5e-300)
            #expect(try await echo(Double.infinity, as: "float8", on: pool) == .infinity)
            #expect(try await echo(-Double.infinity, as: "float8", on: pool) == -.infinity)
            #expect(try await echo(Double.nan, as: "float8", on: pool).isNaN)
            #expect(try await echo(true, as: "bool", on: pool) == true)
            #expect(try await echo(false, as: "bool", on: pool) == false)
        }
    }

    @Test func datesKeepMicrosecondsInUTC() async throws {
        try await withTestPool { pool, _ in
            let samples = [
                Date(timeIntervalSince1970: 1_709_622_489.123456),
                Date(timeIntervalSince1970: 0),
                Date(timeIntervalSince1970: -2_208_988_800.5),  // 1899-12-31 23:59:59.5
                Date(timeIntervalSince1970: 4_102_444_800.000001),  // 2100-01-01
            ]
            for date in samples {
                let back = try await echo(date, as: "timestamptz", on: pool)
                #expect(abs(back.timeIntervalSince(date)) < 0.000_001, "\(date) came back as \(back)")
            }
            // The server sees the same instant we meant, and prints it in UTC.
            let text = try await pool.withConnection { connection in
                try connection.query("SELECT $1::timestamptz::text AS t", [Date(timeIntervalSince1970: 1_709_622_489.25)]).onlyRow()
                    .decode("t", as: String.self)
            }
            #expect(text == "2024-03-05 07:08:09.25+00")
        }
    }

    @Test func byteaWithZeroBytesAndFewMebibytes() async throws {
        try await withTestPool { pool, _ in
            let small: [UInt8] = [0, 1, 0, 255, 0, 0x5c, 0x78, 0]
            #expect(try await echo(small, as: "bytea", on: pool) == small)
            #expect(try await echo([UInt8](), as: "bytea", on: pool) == [])
            #expect(try await echo(Data(small), as: "bytea", on: pool) == Data(small))

            var generator = SystemRandomNumberGenerator()
            let big = (0..<(3 * 1024 * 1024 + 17)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let stored = try await pool.withConnection { connection in
                try connection.execute("CREATE TABLE blobs (id int PRIMARY KEY, body bytea NOT NULL)")
                try connection.execute("INSERT INTO blobs VALUES (1, $1)", [big])
                let row = try connection.query("SELECT body, length(body) AS size FROM blobs").onlyRow()
                return (try row.decode("body", as: [UInt8].self), try row.decode("size", as: Int.self))
            }
            #expect(stored.1 == big.count)
            #expect(stored.0 == big)
        }
    }

    @Test func byteaArrays() async throws {
        try await withTestPool { pool, _ async throws in
            // Backslashes, quotes, braces and commas inside elements; an empty element; zero bytes.
            let values: [[UInt8]] = [[0, 0x5c, 0x22, 0x7b, 0x2c, 0x7d, 255], [], Array("twenty-two bytes long.".utf8)]
            #expect(try await echo(values, as: "bytea[]", on: pool) == values)
            let lengths = try await pool.withConnection { connection in
                try connection.query("SELECT octet_length(b) FROM unnest($1::bytea[]) AS b", [values]).map { try $0.decode(0, as: Int.self) }
            }
            #expect(lengths == values.map(\.count))
        }
    }

    @Test func arraysWithQuotesCommasAndNulls() async throws {
        try await withTestPool { pool, _ in
            let awkward = ["plain", "with, comma", "with \"quotes\"", "back\\slash", "{braces}", "NULL", "", " spaced ", "ünï", "a'b"]
            #expect(try await echo(awkward, as: "text[]", on: pool) == awkward)
            #expect(try await echo([String](), as: "text[]", on: pool) == [])
            let withNulls: [String?] = ["a", nil, "NULL", nil]
            #expect(try await echo(withNulls, as: "text[]", on: pool) == withNulls)
            #expect(try await echo([Int64.min, 0, Int64.max], as: "int8[]", on: pool) == [Int64.min, 0, Int64.max])
            #expect(try await echo([1, 2, 3], as: "int8[]", on: pool) == [1, 2, 3])
            #expect(try await echo([Int32(7), -7], as: "int4[]", on: pool) == [7, -7])
            // Sent in the binary format: empty arrays, NULLs of every element type, and a large
            // element, each read back as sent.
            #expect(try await echo([Int64](), as: "int8[]", on: pool) == [])
            #expect(try await echo([Int32](), as: "int4[]", on: pool) == [])
            #expect(try await echo([[UInt8]](), as: "bytea[]", on: pool) == [])
            #expect(try await echo([Int64?.none, 5, nil], as: "int8[]", on: pool) == [nil, 5, nil])
            #expect(try await echo([Int?.none, -5], as: "int8[]", on: pool) == [nil, -5])
            #expect(try await echo([Int32?.none, 9], as: "int4[]", on: pool) == [nil, 9])
            #expect(try await echo([[UInt8]?.none, [0, 1], []], as: "bytea[]", on: pool) == [nil, [0, 1], []])
            let large = String(repeating: "ünï\\\"{,}", count: 100_000)
            #expect(try await echo([large, "", large], as: "text[]", on: pool) == [large, "", large])
            // The string "NULL" and SQL NULL stay distinct on the server too.
            let nullCount = try await pool.withConnection { connection in
                try connection.query("SELECT array_position($1::text[], NULL) AS p", [withNulls]).onlyRow().decode("p", as: Int.self)
            }
            #expect(nullCount == 2)
            // A NULL element does not fit a non-optional element type.
            let row = try await pool.withConnection { connection in
                try connection.query("SELECT ARRAY['a', NULL] AS a").onlyRow()
            }
            let error = try #require(throws: PostgresError.self) { try row.decode("a", as: [String].self) }
            #expect(error.kind == .decoding)
        }
    }

    @Test func json() async throws {
        try await withTestPool { pool, _ in
            struct Payload: Codable, Equatable { var name: String; var sizes: [Int] }
            let payload = Payload(name: "ü \"quoted\"", sizes: [1, 2])
            let back = try await echo(try PostgresJSON(encoding: payload), as: "jsonb", on: pool)
            #expect(try back.decode(Payload.self) == payload)
            let fromData = try await echo(PostgresJSON(data: Data(#"{"b":1,  "a":[true,null]}"#.utf8)), as: "jsonb", on: pool)
            #expect(fromData.text == #"{"a": [true, null], "b": 1}"#)
        }
    }

    @Test func nullsDecodeIntoOptionalsOnly() async throws {
        try await withTestPool { pool, _ in
            let values: [any PostgresBindable] = [
                String?.none, Int?.none, Int64?.none, Int32?.none, Double?.none, Bool?.none,
                Date?.none, [UInt8]?.none, Data?.none, [String]?.none, [Int64]?.none, PostgresJSON?.none,
            ]
            let row = try await pool.withConnection { connection in
                try connection.query(
                    "SELECT $1::text AS a, $2::int8 AS b, $3::int8 AS c, $4::int4 AS d, $5::float8 AS e, $6::bool AS f, "
                        + "$7::timestamptz AS g, $8::bytea AS h, $9::bytea AS i, $10::text[] AS j, $11::int8[] AS k, $12::jsonb AS l",
                    values
                ).onlyRow()
            }
            #expect(try row.decode("a", as: String?.self) == nil)
            #expect(try row.decode("b", as: Int?.self) == nil)
            #expect(try row.decode("c", as: Int64?.self) == nil)
            #expect(try row.decode("d", as: Int32?.self) == nil)
            #expect(try row.decode("e", as: Double?.self) == nil)
            #expect(try row.decode("f", as: Bool?.self) == nil)
            #expect(try row.decode("g", as: Date?.self) == nil)
            #expect(try row.decode("h", as: [UInt8]?.self) == nil)
            #expect(try row.decode("i", as: Data?.self) == nil)
            #expect(try row.decode("j", as: [String]?.self) == nil)
            #expect(try row.decode("k", as: [Int64]?.self) == nil)
            #expect(try row.decode("l", as: PostgresJSON?.self) == nil)
            #expect(row.isNull(0))

            let error = try #require(throws: PostgresError.self) { try row.decode("b", as: Int.self) }
            #expect(error.kind == .decoding)
            #expect(error.description.contains("\"b\""))

            let present = try await pool.withConnection { connection in
                try connection.query("SELECT $1::int8 AS n", [Int?.some(5)]).onlyRow().decode("n", as: Int?.self)
            }
            #expect(present == 5)
        }
    }

    @Test func decodingTheWrongTypeNamesTheColumnButNotTheValue() async throws {
        try await withTestPool { pool, _ in
            let row = try await pool.withConnection { connection in
                try connection.query("SELECT 'secret-value-1234' AS token").onlyRow()
            }
            let error = try #require(throws: PostgresError.self) { try row.decode("token", as: Int.self) }
            #expect(error.kind == .decoding)
            #expect(error.description.contains("token"))
            #expect(!error.description.contains("secret-value-1234"))
            #expect(error.debugDescription.contains("secret-value-1234"))
            #expect(throws: PostgresError.self) { try row.decode("missing", as: String.self) }
            #expect(throws: PostgresError.self) { try row.decode(3, as: String.self) }
        }
    }
}
