import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

/// A slot's hot statements (`WebhookLedger.claimNext`) read what they are about, not every
/// pending delivery, even when PostgreSQL's statistics were taken while nothing was pending and
/// a backlog has built up since: the plans it then chose for them read a whole partial index of
/// pending deliveries (see 0014_no_index_of_due_deliveries.sql), which made webhooks.sh's drain
/// spend most of PostgreSQL's time there.
@Suite("A delivery slot's statements stay on their keys, whatever the statistics say")
struct NextInStreamPlanTests {
    @Test("the stream's next deliveries and a slot's candidate heads read a handful of rows in a backlog of hundreds")
    func plansReadWhatTheyAreAbout() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: "http://127.0.0.1:9/hooks")
            for _ in 0..<Self.streams {
                let task = try await ferry.makeTask(in: session)
                for _ in 0..<4 { try await ferry.emit(.downloadTaskDidWriteData, task: task) }
            }
            try await ferry.database.webhookLedger(instanceID: "plans-test").fanOutEverything()

            let connection = try PostgresConnection.connect(ferry.test.conninfo)
            defer { connection.close() }
            // Statistics of a quiet moment (every delivery finished), then a backlog.
            try connection.execute("UPDATE webhook_deliveries SET status = 'delivered'")
            try connection.execute("VACUUM ANALYZE webhook_deliveries")
            let pending = try connection.execute(
                "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() - interval '1 second'"
            )
            #expect(pending == Self.streams * 5)
            let head = try connection.query(
                "SELECT id, endpoint_id, stream_id, sequence FROM webhook_deliveries ORDER BY event_position LIMIT 1"
            )[0]
            let (id, endpoint, stream) = (try head.decode(0, as: String.self), try head.decode(1, as: String.self), try head.decode(2, as: String.self))
            let sequence = try head.decode(3, as: Int64.self)

            // Generic plans: what a pooled connection uses after a statement's first executions.
            // As the slots run them (StatementPlans.byKeyPlannedOnce).
            try connection.execute("SET plan_cache_mode = force_generic_plan")
            try connection.execute("SET enable_seqscan = off")
            try connection.execute("PREPARE run_plan(text, text, int8, text, float8, int8) AS \(WebhookLedger.runSQL)")
            try connection.execute("PREPARE switch_plan(text[], text[], text[], int8[], text[], text, float8, int8) AS \(WebhookLedger.switchSQL)")
            let run = try explain(
                "EXECUTE run_plan('\(endpoint)', '\(stream)', \(sequence), 'plans-test', 30, 16)", on: connection
            )
            // A slot offers several candidates at once: another stream's second delivery (not a
            // head, so passed over), then nine heads.
            let offered = try connection.query(
                """
                (SELECT id, stream_id, sequence FROM webhook_deliveries WHERE stream_id <> $1 ORDER BY event_position OFFSET 1 LIMIT 1)
                UNION ALL
                (SELECT id, stream_id, sequence FROM webhook_deliveries WHERE sequence = 1 AND stream_id <> $1 ORDER BY event_position LIMIT 8)
                """,
                [stream]
            ).map { (id: try $0.decode(0, as: String.self), stream: try $0.decode(1, as: String.self), sequence: try $0.decode(2, as: Int64.self)) }
            func literal(_ values: [String]) -> String { "'{\(values.joined(separator: ","))}'" }
            let candidate = try explain(
                "EXECUTE switch_plan(\(literal(offered.map(\.id) + [id])), \(literal(Array(repeating: endpoint, count: offered.count + 1))), "
                    + "\(literal(offered.map(\.stream) + [stream])), \(literal(offered.map { String($0.sequence) } + [String(sequence)])), "
                    + "'{}', 'plans-test', 30, 16)",
                on: connection
            )
            // The same after the slot's own stream, which has nothing more.
            try connection.execute(
                "PREPARE own_plan(text[], text[], text[], int8[], text[], text, float8, int8, text, text, int8) AS \(WebhookLedger.switchAfterStreamSQL)"
            )
            let afterOwn = try explain(
                "EXECUTE own_plan(\(literal(offered.map(\.id))), \(literal(Array(repeating: endpoint, count: offered.count))), "
                    + "\(literal(offered.map(\.stream))), \(literal(offered.map { String($0.sequence) })), "
                    + "'{}', 'plans-test', 30, 16, '\(endpoint)', '\(stream)', 5)",
                on: connection
            )
            #expect(!run.scans.isEmpty && !candidate.scans.isEmpty, "each reads the table: \(run); \(candidate)")
            #expect(afterOwn.rowsRead <= 25, "the own stream's index probe, then as a switch: \(afterOwn)")
            #expect(run.rowsRead <= 10, "the stream's next four, by the stream index: \(run)")
            #expect(
                candidate.rowsRead <= 25,
                "ten candidates by their keys, each stream probed for earlier ones, and the chosen one's next four: \(candidate)"
            )
        }
    }

    @Test("the room count of an ended decision's endpoint reads the pending deliveries, not the tenant's history")
    func roomCountReadsPendingDeliveriesOnly() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: "http://127.0.0.1:9/hooks")
            let ledger = ferry.database.webhookLedger(instanceID: "plans-test")
            func makeStreams() async throws {
                for _ in 0..<Self.streams {
                    let task = try await ferry.makeTask(in: session)
                    for _ in 0..<4 { try await ferry.emit(.downloadTaskDidWriteData, task: task) }
                }
                try await ledger.fanOutEverything()
            }
            let connection = try PostgresConnection.connect(ferry.test.conninfo)
            defer { connection.close() }
            // A history of delivered rows, statistics of that quiet moment, then a backlog.
            try await makeStreams()
            try connection.execute("UPDATE webhook_deliveries SET status = 'delivered'")
            try connection.execute("VACUUM ANALYZE webhook_deliveries")
            try await makeStreams()
            try connection.execute("UPDATE webhook_deliveries SET lease_owner = 'elsewhere', lease_expires_at = now() + interval '1 minute' WHERE status = 'pending' AND sequence = 1")
            let endpoint = try connection.query("SELECT id FROM webhook_endpoints LIMIT 1")[0].decode(0, as: String.self)

            // As the slots run them (StatementPlans.byKeyPlannedOnce).
            try connection.execute("SET plan_cache_mode = force_generic_plan")
            try connection.execute("SET enable_seqscan = off")
            try connection.execute(
                "PREPARE room_plan(text[], text[], text[], int8[], text[], text, float8, int8, text, int8, int8) AS \(WebhookLedger.switchIfRoomSQL)"
            )
            // No candidates: the count alone.
            let room = try explain("EXECUTE room_plan('{}', '{}', '{}', '{}', '{}', 'plans-test', 30, 16, '\(endpoint)', 16, 64)", on: connection)
            #expect(room.rowsRead <= Self.streams * 5 + 20, "the \(Self.streams * 5) pending deliveries, once: \(room)")
        }
    }

    /// Tasks of five deliveries each: a backlog of five hundred.
    private static let streams = 100

    /// What a statement's plan read from `webhook_deliveries`, executed and rolled back.
    private struct Reading: CustomStringConvertible {
        /// Rows its scans of the table produced, plus those they threw away.
        var rowsRead = 0
        var scans: [String] = []
        var description: String { "\(rowsRead) rows read by \(scans)" }
    }

    private func explain(_ statement: String, on connection: PostgresConnection) throws -> Reading {
        try connection.execute("BEGIN")
        defer { _ = try? connection.execute("ROLLBACK") }
        let json = try connection.query("EXPLAIN (ANALYZE, FORMAT JSON) \(statement)")[0].decode(0, as: String.self)
        let document = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]
        var reading = Reading()
        func visit(_ node: [String: Any]) {
            if node["Relation Name"] as? String == "webhook_deliveries", (node["Node Type"] as? String)?.hasSuffix("Scan") == true {
                // Both counts are averages per loop.
                let loops = node["Actual Loops"] as? Int ?? 1
                let read = ((node["Actual Rows"] as? Int ?? 0) + (node["Rows Removed by Filter"] as? Int ?? 0)) * loops
                reading.rowsRead += read
                reading.scans.append("\(node["Node Type"] ?? "?") \(node["Index Name"] ?? "") \(read)")
            }
            for child in node["Plans"] as? [[String: Any]] ?? [] { visit(child) }
        }
        if let plan = document?.first?["Plan"] as? [String: Any] { visit(plan) }
        return reading
    }
}
