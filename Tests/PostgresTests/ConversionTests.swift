import Foundation
@testable import Postgres
import Testing

/// The parsers and formatters alone, without a server.
@Suite struct ConversionTests {
    @Test func arrayLiteralsParseQuotingEscapesAndNull() throws {
        #expect(try PostgresArrayLiteral.parse("{}") == [])
        #expect(try PostgresArrayLiteral.parse(#"{a,"b c",NULL,"NULL","say \"hi\"","back\\slash",""}"#)
            == ["a", "b c", nil, "NULL", "say \"hi\"", "back\\slash", ""])
        #expect(try PostgresArrayLiteral.parse("{null,x}") == [nil, "x"])
        #expect(throws: PostgresError.self) { try PostgresArrayLiteral.parse("{{1,2},{3,4}}") }
        #expect(throws: PostgresError.self) { try PostgresArrayLiteral.parse("[0:1]={1,2}") }
        #expect(throws: PostgresError.self) { try PostgresArrayLiteral.parse(#"{"unterminated}"#) }
        let awkward: [String?] = ["a,b", "\"", "\\", nil, "{}", "", "\"\"", "say \"hé\" \\ then ü", #"{"k":"v\"w"}"#]
        #expect(try PostgresArrayLiteral.parse(PostgresArrayLiteral.format(awkward)) == awkward)
        #expect(PostgresArrayLiteral.format(["a\"b\\c", nil, ""]) == #"{"a\"b\\c",NULL,""}"#)
    }

    /// What ValueRoundTripTests sends to a server goes out in the binary format.
    @Test func arraysOfTextIntegersAndBytesAreSentInBinary() {
        #expect(["a"].postgresValue == PostgresValue(.array(.text(["a"])), type: .textArray))
        #expect([String?.some("a"), nil].postgresValue == PostgresValue(.array(.text(["a", nil])), type: .textArray))
        #expect([Int(1)].postgresValue == PostgresValue(.array(.int8([1])), type: .int8Array))
        #expect([Int64?.none].postgresValue == PostgresValue(.array(.int8([nil])), type: .int8Array))
        #expect([Int32(2)].postgresValue == PostgresValue(.array(.int4([2])), type: .int4Array))
        #expect([[UInt8]([7])].postgresValue == PostgresValue(.array(.bytea([[7]])), type: .byteaArray))
        #expect([UInt8]([7]).postgresValue == .binary([7], type: .bytea))
    }

    @Test func timestampsParseISOStyle() throws {
        #expect(try PostgresTimestamp.parse("1970-01-01 00:00:00+00") == Date(timeIntervalSince1970: 0))
        #expect(try PostgresTimestamp.parse("2024-03-05 07:08:09.25+00") == Date(timeIntervalSince1970: 1_709_622_489.25))
        #expect(try PostgresTimestamp.parse("2024-03-05 09:08:09.25+02") == Date(timeIntervalSince1970: 1_709_622_489.25))
        #expect(try PostgresTimestamp.parse("2024-03-05 01:38:09.25-05:30") == Date(timeIntervalSince1970: 1_709_622_489.25))
        #expect(try PostgresTimestamp.parse("2024-03-05") == Date(timeIntervalSince1970: 1_709_596_800))
        let micro = try PostgresTimestamp.parse("2000-01-01 00:00:00.000001+00")
        #expect(PostgresTimestamp.microsecondsSincePostgresEpoch(micro) == 1)
        #expect(throws: PostgresError.self) { try PostgresTimestamp.parse("infinity") }
        #expect(throws: PostgresError.self) { try PostgresTimestamp.parse("2024-13-01 00:00:00+00") }
    }

    @Test func byteaHex() throws {
        #expect(try PostgresByteaText.decode(#"\x00ff10Ab"#) == [0, 255, 16, 171])
        #expect(try PostgresByteaText.decode(#"\x"#) == [])
        #expect(throws: PostgresError.self) { try PostgresByteaText.decode(#"\x0g"#) }
        #expect(throws: PostgresError.self) { try PostgresByteaText.decode("abc") }
    }

    @Test func errorDescriptionsKeepValuesOut() {
        let unique = PostgresError(kind: .query, message: "duplicate key value violates unique constraint \"k\"", sqlState: "23505",
                                   detail: "Key (email)=(a@b.c) already exists.", constraint: "k")
        #expect(unique.isUniqueViolation)
        #expect(unique.description.contains("duplicate key"))
        #expect(!unique.description.contains("a@b.c"))
        let raised = PostgresError(kind: .query, message: "custom: hunter2", sqlState: "P0001")
        #expect(!raised.description.contains("hunter2"))
        let lost = PostgresError(kind: .query, message: "terminating connection due to administrator command", sqlState: "57P01")
        #expect(lost.isConnectionLoss)
        #expect(PostgresError(kind: .query, message: "x", sqlState: "08006").isConnectionLoss)
        #expect(!PostgresError(kind: .query, message: "x", sqlState: "40001").isConnectionLoss)
        // Refused for what the statement carries: it would be again. The rest may pass.
        #expect(unique.isRefusalOfTheStatement)
        for refused in ["22P05", "22001", "42703"] {
            #expect(PostgresError(kind: .query, message: "x", sqlState: refused).isRefusalOfTheStatement, "\(refused)")
        }
        for passing in ["40001", "40P01", "53100", "57P01", "08006", "XX000"] {
            #expect(!PostgresError(kind: .query, message: "x", sqlState: passing).isRefusalOfTheStatement, "\(passing)")
        }
        #expect(!lost.isRefusalOfTheStatement)
        #expect(!PostgresError(kind: .connection, message: "x").isRefusalOfTheStatement)
    }

    @Test func socketDirectoryFallsBackToAShortPath() {
        let short = PostgresClusterConfiguration(dataDirectory: "/var/lib/ferry/postgres")
        #expect(short.resolvedSocketDirectory == "/var/lib/ferry/postgres/run")
        let deep = "/" + String(repeating: "very-long-directory-name/", count: 5) + "postgres"
        let long = PostgresClusterConfiguration(dataDirectory: deep)
        #expect(long.resolvedSocketDirectory.hasPrefix("/tmp/ferry-pg-"))
        #expect(long.resolvedSocketDirectory == PostgresClusterConfiguration(dataDirectory: deep).resolvedSocketDirectory)
        #expect((long.resolvedSocketDirectory + "/.s.PGSQL.5432").utf8.count <= 107)
        #expect(PostgresClusterConfiguration(dataDirectory: "/d", socketDirectory: "/s p").conninfo(database: "db")
            == "host='/s p' port=5432 dbname=db user=ferry")
    }

    @Test func poolQueueStartsWorkersOnlyWhenNoneIsFree() {
        var queue = PostgresPoolQueue(size: 2)
        let job = PostgresPoolJob(deadline: .now, submittedAt: .now, run: { _ in }, fail: { _ in })
        #expect(queue.submit(job) == .startWorker(number: 1))
        #expect(queue.submit(job) == .startWorker(number: 2))
        #expect(queue.submit(job) == .queued)  // at size: waits for a busy worker
        #expect(queue.queuedCount == 3)
        guard case .run = queue.nextStep(wasSleeping: false) else { Issue.record("expected a job"); return }
        _ = queue.nextStep(wasSleeping: false)
        _ = queue.nextStep(wasSleeping: false)
        #expect(queue.nextStep(wasSleeping: false) == nil)  // worker 1 goes to sleep
        #expect(queue.sleepingWorkers == 1)
        _ = queue.close()
        #expect(queue.submit(job) == .rejected)
        guard case .exit = queue.nextStep(wasSleeping: true) else { Issue.record("expected exit"); return }
    }
}
