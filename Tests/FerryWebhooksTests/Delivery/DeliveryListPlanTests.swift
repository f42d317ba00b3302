import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

/// `GET /v1/webhooks/deliveries` reads what a page shows, however many deliveries the tenant has
/// had: in the order of an index, its cursor a range of it, its filters conditions of their own.
/// Before, every page read and sorted all of the tenant's deliveries, and once PostgreSQL planned
/// the statement generically a filter by task read them all too. (A small session's late pages
/// still read the tenant's deliveries before them: see `WebhookStore.deliveriesPage`.)
@Suite("A page of deliveries reads what it shows")
struct DeliveryListPlanTests {
    /// The page asked for, and the most rows its plan may read of the deliveries, and of the events.
    private static let pageSize = 50
    private static let readBound = 4 * pageSize

    private static let deliveries = 20_000
    /// The deliveries of the small session, among them.
    private static let smallSession = 500

    @Test("the first page, a later page, a task's, an endpoint's, a big session's: few rows read, custom or generic; every delivery asked for, in order")
    func pagesReadWhatTheyShow() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let session = try await ferry.makeSession(delegateURL: "http://127.0.0.1:9/hooks").session
            let task = try await ferry.makeTask(in: session)
            try await ferry.emit(.downloadTaskDidWriteData, task: task)
            try await ferry.database.webhookLedger(instanceID: "plans-test").fanOutEverything()

            let connection = try PostgresConnection.connect(ferry.test.conninfo)
            defer { connection.close() }
            // Many more events of the tenant, each with its delivery, all delivered: tasks of five
            // events, half of them in one big session, the others in fifty sessions, and the
            // last few in a small session of their own.
            try connection.execute(
                """
                INSERT INTO events (id, position, tenant_id, session_id, task_id, sequence, type, data)
                SELECT 'evt_many' || g, e.position + g, e.tenant_id,
                       CASE WHEN g > $1 - $2 THEN 'ses_small' WHEN g / 5 % 2 = 0 THEN 'ses_big' ELSE 'ses_many' || (g / 5 % 100) END, 'tsk_many' || (g / 5), g % 5, e.type, '{}'
                FROM generate_series(1, $1) g, (SELECT * FROM events ORDER BY position DESC LIMIT 1) e
                """,
                [Self.deliveries, Self.smallSession]
            )
            try connection.execute(
                """
                INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_position, event_type, session_id,
                                                task_id, stream_id, sequence, status)
                SELECT 'whd_many' || substr(e.id, 9), e.tenant_id, d.endpoint_id, e.id, e.position, e.type, e.session_id,
                       e.task_id, e.task_id, e.sequence, 'delivered'
                FROM events e, (SELECT * FROM webhook_deliveries LIMIT 1) d
                WHERE e.id LIKE 'evt_many%'
                """
            )
            try connection.execute("ANALYZE events")
            try connection.execute("ANALYZE webhook_deliveries")
            let endpointID = try connection.query("SELECT endpoint_id FROM webhook_deliveries LIMIT 1")[0].decode(0, as: String.self)

            let pages: [(name: String, filter: WebhookStore.DeliveryFilter, after: String?)] = [
                ("first page", .init(), nil),
                ("page after the middle", .init(), "whd_many\(Self.deliveries / 2)"),
                ("one task's", .init(taskID: "tsk_many777"), nil),
                ("one endpoint's, delivered", .init(statuses: [.delivered], endpointID: endpointID), nil),
                ("a big session's", .init(sessionID: "ses_big"), nil),
                ("a later page of a big session's", .init(sessionID: "ses_big"), "whd_many\(Self.deliveries / 2)"),
            ]
            for page in pages {
                let statement = WebhookStore.deliveriesPage(tenantID: session.tenantID, filter: page.filter, limit: Self.pageSize, after: page.after)
                for (mode, plan) in try Self.plans(of: statement, on: connection) {
                    for relation in ["webhook_deliveries", "events"] {
                        let read = Self.rowsRead(of: relation, in: plan)
                        #expect(read <= Self.readBound, "\(page.name), \(mode): read \(read) rows of \(relation) for a page of \(Self.pageSize)")
                    }
                    #expect(plan["Actual Rows"] as? Int ?? 0 > 0, "\(page.name), \(mode): the page is empty")
                }
            }

            // What the pages hold: every delivery asked for, once, in event order, whichever way
            // they were read (the first pages only, for the whole tenant's).
            let store = WebhookStore(pool: ferry.pool)
            let lists: [(filter: WebhookStore.DeliveryFilter, condition: String, pages: Int)] = [
                (.init(), "true", 3),
                (.init(sessionID: "ses_small"), "session_id = 'ses_small'", .max),
                (.init(sessionID: "ses_big"), "session_id = 'ses_big'", 3),
                (.init(taskID: "tsk_many777"), "task_id = 'tsk_many777'", .max),
                (.init(statuses: [.pending]), "status = 'pending'", .max),
            ]
            for list in lists {
                var read: [String] = []
                var after: String?
                for _ in 0..<list.pages {
                    let page = try await store.deliveries(tenantID: session.tenantID, filter: list.filter, limit: 70, after: after)
                    read += page.items.map(\.id)
                    after = page.nextCursor
                    if after == nil { break }
                }
                let expected = try connection.query(
                    "SELECT id FROM webhook_deliveries WHERE tenant_id = $1 AND \(list.condition) ORDER BY event_position, id LIMIT $2",
                    [session.tenantID, read.count]
                ).map { try $0.decode(0, as: String.self) }
                #expect(!read.isEmpty && read == expected, "\(list.condition): \(read.count) read, \(expected.count) expected")
            }
        }
    }

    /// The statement's plans, executed: as a pooled connection plans it at first (custom), and
    /// once it has run a few times (generic).
    private static func plans(
        of statement: (sql: String, parameters: [any PostgresBindable]), on connection: PostgresConnection
    ) throws -> [(mode: String, plan: [String: Any])] {
        try connection.execute("DEALLOCATE ALL")
        try connection.execute("PREPARE list_page AS \(statement.sql)")
        let arguments = statement.parameters.map(literal).joined(separator: ", ")
        return try ["force_custom_plan", "force_generic_plan"].map { mode in
            try connection.execute("SET plan_cache_mode = \(mode)")
            let json = try connection.query("EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE list_page(\(arguments))")[0].decode(0, as: String.self)
            let plan = try #require((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])?.first?["Plan"] as? [String: Any])
            return (mode, plan)
        }
    }

    /// A parameter as an SQL literal (the statement's take text, text arrays and integers).
    private static func literal(_ value: any PostgresBindable) -> String {
        switch value {
        case let text as String: "'\(text)'"
        case let texts as [String]: "ARRAY[\(texts.map { "'\($0)'" }.joined(separator: ", "))]"
        default: "\(value)"
        }
    }

    /// The rows the plan's scans of `relation` read: those they returned and those their filters
    /// threw away, over all their loops.
    private static func rowsRead(of relation: String, in node: [String: Any]) -> Int {
        let loops = node["Actual Loops"] as? Int ?? 1
        let own = node["Relation Name"] as? String == relation
            ? ((node["Actual Rows"] as? Int ?? 0) + (node["Rows Removed by Filter"] as? Int ?? 0)) * loops
            : 0
        return own + (node["Plans"] as? [[String: Any]] ?? []).reduce(0) { $0 + rowsRead(of: relation, in: $1) }
    }
}
