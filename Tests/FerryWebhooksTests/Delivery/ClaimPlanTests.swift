import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

/// The delivery loop's claim (`WebhookLedger.claimDue`) reads every ready head once: its cost
/// grows with the backlog, not with the backlog's square. PostgreSQL estimates its intermediate
/// results at a row or two whatever they hold, so any join of two of them is planned as a
/// nested loop that compares every pair: joined back to the ready heads, the heads ranked by
/// endpoint cost 160 ms a claim with a thousand of them (bench/decisions.sh, downloads).
@Suite("The delivery loop's claim compares no pair of ready heads")
struct ClaimPlanTests {
    @Test(
        "a claim over a backlog of hundreds of streams throws few rows away in its joins",
        arguments: [1, Self.streams / 2]
    )
    func claimIsNotQuadratic(endpoints: Int) async throws {
        try await WebhookHarness.run(start: false) { ferry in
            var sessions: [SessionRecord] = []
            for _ in 0..<endpoints {
                sessions.append(try await ferry.makeSession(delegateURL: "http://127.0.0.1:9/hooks").session)
            }
            for stream in 0..<Self.streams {
                let task = try await ferry.makeTask(in: sessions[stream % endpoints])
                try await ferry.emit(.downloadTaskDidWriteData, task: task)
            }
            try await ferry.database.webhookLedger(instanceID: "plans-test").fanOutEverything()

            let connection = try PostgresConnection.connect(ferry.test.conninfo)
            defer { connection.close() }
            try connection.execute("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second'")
            // Streams in flight elsewhere (a quarter of them, on up to half the endpoints), so
            // that the claim counts busy ones by endpoint and by tenant too.
            try connection.execute(
                """
                UPDATE webhook_deliveries SET lease_owner = 'elsewhere', lease_expires_at = now() + interval '1 minute'
                WHERE id IN (SELECT id FROM webhook_deliveries WHERE sequence = 1 ORDER BY event_position LIMIT $1)
                """,
                [Self.streams / 4]
            )
            try connection.execute("ANALYZE webhook_deliveries")
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            let json = try connection.query(
                "EXPLAIN (ANALYZE, FORMAT JSON) \(WebhookLedger.claimSQL)",
                ["plans-test", 16, 64, 8, 30.0, [String](), WebhookLedger.maximumCandidates]
            )[0].decode(0, as: String.self)
            let plan = try #require((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])?.first?["Plan"] as? [String: Any])
            let (thrownAway, joins) = Self.rowsRemovedByJoins(plan)
            // Each stream has two deliveries (didCreateTask's and the progress'), so there are
            // `streams` ready heads; a pairwise join of two lists of them, or of them and the
            // endpoints with streams in flight, throws away thousands of rows (40,000 and 5,000).
            #expect(thrownAway <= Self.streams * 20, "rows thrown away by joins: \(joins)")
        }
    }

    /// Tasks, each a stream with two pending deliveries.
    private static let streams = 200

    /// The rows every join of the plan compared and threw away, and which joins did.
    private static func rowsRemovedByJoins(_ node: [String: Any]) -> (Int, [String]) {
        let loops = node["Actual Loops"] as? Int ?? 1
        let removed = (node["Rows Removed by Join Filter"] as? Int ?? 0) * loops
        var total = removed
        var joins = removed > 0 ? ["\(node["Node Type"] ?? "?") \(node["Join Filter"] ?? ""): \(removed)"] : []
        for child in node["Plans"] as? [[String: Any]] ?? [] {
            let (childRemoved, childJoins) = rowsRemovedByJoins(child)
            total += childRemoved
            joins += childJoins
        }
        return (total, joins)
    }
}
