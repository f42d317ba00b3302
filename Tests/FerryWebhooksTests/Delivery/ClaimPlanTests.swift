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
            // Streams in flight elsewhere, so that the claim counts busy ones by endpoint and by
            // tenant too: a few on the one endpoint (which then still has room), or one on each
            // of half the endpoints.
            let busy = endpoints == 1 ? 4 : endpoints / 2
            try connection.execute(
                """
                UPDATE webhook_deliveries SET lease_owner = 'elsewhere', lease_expires_at = now() + interval '1 minute'
                WHERE id IN (SELECT id FROM webhook_deliveries WHERE sequence = 1 ORDER BY event_position LIMIT $1)
                """,
                [busy]
            )
            try connection.execute("ANALYZE webhook_deliveries")
            try connection.execute("ANALYZE webhook_endpoints")
            for (mode, plan) in try Self.claimPlans(on: connection) {
                // Each stream has two deliveries (didCreateTask's and the progress'): its head is
                // ready unless it is in flight. A claim that compared every pair of those heads,
                // or every head with every endpoint, threw away tens of thousands of rows.
                let readyHeads = Self.streams - busy
                #expect(plan["Actual Rows"] as? Int == readyHeads, "\(mode): the claim's leases and candidates are every ready head")
                let (thrownAway, where_) = Self.rowsThrownAway(plan)
                #expect(thrownAway <= Self.streams * 20, "\(mode): rows thrown away: \(where_)")
            }
        }
    }

    @Test("a claim reads the endpoints' limits once, not once per head, whatever the statistics say")
    func endpointLimitsAreReadOnce() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let session = try await ferry.makeSession(delegateURL: "http://127.0.0.1:9/hooks").session
            let connection = try PostgresConnection.connect(ferry.test.conninfo)
            defer { connection.close() }
            // Statistics taken while next to nothing was pending (all delivered), as
            // autovacuum leaves them when a burst of tasks starts: the planner then takes the
            // ready heads for a row or two, and put the endpoints' look-up inside the loop over
            // them (bench/decisions.sh's data tasks: once for each of 700 heads).
            let ledger = ferry.database.webhookLedger(instanceID: "plans-test")
            for _ in 0..<Self.streams * 2 {
                try await ferry.emit(.downloadTaskDidWriteData, task: try await ferry.makeTask(in: session))
            }
            try await ledger.fanOutEverything()
            try connection.execute("UPDATE webhook_deliveries SET status = 'delivered'")
            try connection.execute("ANALYZE webhook_deliveries")
            try connection.execute("ANALYZE webhook_endpoints")
            for _ in 0..<Self.streams / 2 {
                try await ferry.emit(.downloadTaskDidWriteData, task: try await ferry.makeTask(in: session))
            }
            try await ledger.fanOutEverything()
            try connection.execute("UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second'")
            for (mode, plan) in try Self.claimPlans(on: connection) {
                #expect(plan["Actual Rows"] as? Int == Self.streams / 2, "\(mode): the claim's leases and candidates are every ready head")
                let reads = Self.loops(ofScansOf: "webhook_endpoints", in: plan)
                #expect(reads.allSatisfy { $0 <= 1 }, "\(mode): webhook_endpoints read \(reads) times")
            }
        }
    }

    /// Tasks, each a stream with two pending deliveries.
    private static let streams = 200

    /// The claim's plans, executed and rolled back: planned for its values (custom), generically,
    /// and generically without sequential scans, as `claimDue` runs it (`StatementPlans.byKeyPlannedOnce`).
    private static func claimPlans(on connection: PostgresConnection) throws -> [(mode: String, plan: [String: Any])] {
        try connection.execute("PREPARE claim_plan(text, int8, int8, int8, float8, text[], int8) AS \(WebhookLedger.claimSQL)")
        let modes = [("force_custom_plan", "on"), ("force_generic_plan", "on"), ("force_generic_plan", "off")]
        return try modes.map { plans, sequentialScans in
            let mode = "\(plans), enable_seqscan \(sequentialScans)"
            try connection.execute("SET plan_cache_mode = \(plans)")
            try connection.execute("SET enable_seqscan = \(sequentialScans)")
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            let json = try connection.query(
                "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_plan('plans-test', 16, 64, 8, 30, '{}', \(WebhookLedger.maximumCandidates))"
            )[0].decode(0, as: String.self)
            let plan = try #require((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])?.first?["Plan"] as? [String: Any])
            return (mode, plan)
        }
    }

    /// How many times each scan of `relation` in the plan ran.
    private static func loops(ofScansOf relation: String, in node: [String: Any]) -> [Int] {
        let own = node["Relation Name"] as? String == relation ? [node["Actual Loops"] as? Int ?? 1] : []
        return own + (node["Plans"] as? [[String: Any]] ?? []).flatMap { loops(ofScansOf: relation, in: $0) }
    }

    /// The rows the plan's joins compared and threw away, and those its scans of the endpoints
    /// read and threw away (a head's endpoint is a look-up by key), with where.
    private static func rowsThrownAway(_ node: [String: Any]) -> (Int, [String]) {
        let loops = node["Actual Loops"] as? Int ?? 1
        var removed = (node["Rows Removed by Join Filter"] as? Int ?? 0) * loops
        if node["Relation Name"] as? String == "webhook_endpoints" {
            removed += (node["Rows Removed by Filter"] as? Int ?? 0) * loops
        }
        var total = removed
        var places = removed > 0 ? ["\(node["Node Type"] ?? "?") \(node["Relation Name"] ?? "") \(node["Join Filter"] ?? ""): \(removed)"] : []
        for child in node["Plans"] as? [[String: Any]] ?? [] {
            let (childRemoved, childPlaces) = rowsThrownAway(child)
            total += childRemoved
            places += childPlaces
        }
        return (total, places)
    }
}
