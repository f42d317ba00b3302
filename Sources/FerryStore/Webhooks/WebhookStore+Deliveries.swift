import FerryCore
import Foundation
import Postgres

extension WebhookStore {
    /// Filters of `GET /v1/webhooks/deliveries`.
    public struct DeliveryFilter: Sendable {
        public var statuses: [WebhookDeliveryRecord.Status]?
        public var taskID: String?
        public var sessionID: String?
        public var endpointID: String?

        public init(statuses: [WebhookDeliveryRecord.Status]? = nil, taskID: String? = nil, sessionID: String? = nil, endpointID: String? = nil) {
            self.statuses = statuses
            self.taskID = taskID
            self.sessionID = sessionID
            self.endpointID = endpointID
        }
    }

    /// The attempts shown with each delivery: the most recent ones.
    static let attemptsShown = 20

    /// A page of the tenant's deliveries in event order; `after` is the last id of the previous page.
    public func deliveries(tenantID: String, filter: DeliveryFilter, limit: Int, after: String?) async throws -> Page<WebhookDeliveryRecord> {
        let statement = Self.deliveriesPage(tenantID: tenantID, filter: filter, limit: limit, after: after)
        return try await pool.withConnection { connection in
            let rows = try connection.query(statement.sql, statement.parameters)
            try PageCursor.check(after, pageIsEmpty: rows.isEmpty, resource: "delivery") {
                try !connection.query("SELECT 1 FROM webhook_deliveries WHERE id = $1 AND tenant_id = $2", [$0, tenantID]).isEmpty
            }
            var page = try Page(rows: rows, limit: limit, decode: WebhookDeliveryRecord.decode, cursor: \.id)
            page.items = try Self.withAttempts(page.items, on: connection)
            return page
        }
    }

    /// `deliveries`' statement, with only the conditions asked for (`ListConditions`). Read in the
    /// order of `webhook_deliveries_tenant` (tenant, event position, id), a page costs what it
    /// holds, however many deliveries the tenant has had (`DeliveryListPlanTests`). Not so a page
    /// of a small session whose deliveries come late in a big tenant's: read in the tenant's
    /// order, it reads the tenant's deliveries before them. (Read through the session's events
    /// instead, every page read all of the session's events from the cursor on, which a big
    /// session, the more common, could not afford.)
    static func deliveriesPage(
        tenantID: String, filter: DeliveryFilter, limit: Int, after: String?
    ) -> (sql: String, parameters: [any PostgresBindable]) {
        var list = ListConditions()
        let tenant = list.bind(tenantID)
        list.require("d.tenant_id = \(tenant)")
        list.filter(filter.statuses?.map(\.rawValue)) { "d.status = ANY(\($0)::text[])" }
        // Through the task's events (events_task_sequence) to their deliveries: the deliveries
        // have no index by task.
        list.filter(filter.taskID) { "d.event_id IN (SELECT e.id FROM events e WHERE e.task_id = \($0))" }
        list.filter(filter.sessionID) { "d.session_id = \($0)" }
        list.filter(filter.endpointID) { "d.endpoint_id = \($0)" }
        list.filter(after) {
            "(d.event_position, d.id) > (SELECT event_position, id FROM webhook_deliveries WHERE id = \($0) AND tenant_id = \(tenant))"
        }
        let sql = """
            SELECT \(WebhookDeliveryRecord.columns)
            FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
            \(list.whereClause)
            ORDER BY d.event_position, d.id
            LIMIT \(list.bind(limit + 1))
            """
        return (sql, list.parameters)
    }

    public func delivery(tenantID: String, id: String) async throws -> WebhookDeliveryRecord {
        try await pool.withConnection { connection in
            try Self.delivery(tenantID: tenantID, id: id, on: connection)
        }
    }

    /// Makes the delivery due now: a pending one is attempted at once, a dead, failed or even
    /// delivered one is sent again (same `webhook-id`). One more attempt; if it fails, the
    /// schedule continues from the attempts already made. Run again if PostgreSQL breaks a
    /// deadlock with it (it locks a delivery that attempts and claims lock too).
    public func retry(tenantID: String, id: String) async throws -> WebhookDeliveryRecord {
        try await pool.withRetriedTransaction { connection in
            guard let row = try connection.query(
                """
                SELECT coalesce(d.lease_expires_at > now(), false) AS in_flight, w.status AS endpoint_status, w.id AS endpoint_id
                FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                WHERE d.tenant_id = $1 AND d.id = $2
                FOR UPDATE OF d
                """,
                [tenantID, id]
            ).first else { throw StoreError.notFound(resource: "webhook delivery") }
            guard try !row.decode("in_flight", as: Bool.self) else {
                throw StoreError.conflict("The delivery is being attempted right now; look at it again in a few seconds.")
            }
            guard try row.decode("endpoint_status", as: String.self) == WebhookEndpointRecord.Status.active.rawValue else {
                let endpoint = try row.decode("endpoint_id", as: String.self)
                throw StoreError.conflict("The endpoint is disabled; enable it first with POST /v1/webhooks/endpoints/\(endpoint)/enable.")
            }
            // The attempt that delivered it, kept on the delivery's row (migration 0019), joins the
            // others in webhook_attempts: the next attempt's result takes its place.
            try connection.execute(
                """
                WITH delivering AS (
                    INSERT INTO webhook_attempts (delivery_id, started_at, duration_ms, status_code, error, response_excerpt)
                    SELECT id, delivered_started_at, delivered_duration_ms, last_status_code, last_error, delivered_response_excerpt
                    FROM webhook_deliveries WHERE id = $1 AND delivered_started_at IS NOT NULL
                )
                UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), lease_owner = NULL,
                                              lease_expires_at = NULL, updated_at = now(), delivered_started_at = NULL,
                                              delivered_duration_ms = NULL, delivered_response_excerpt = NULL
                WHERE id = $1
                """,
                [id]
            )
            try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.events, WebhookLedger.deliveriesChangedPayload])
            return try Self.delivery(tenantID: tenantID, id: id, on: connection)
        }
    }

    static func delivery(tenantID: String, id: String, on connection: PostgresConnection) throws -> WebhookDeliveryRecord {
        guard let row = try connection.query(
            """
            SELECT \(WebhookDeliveryRecord.columns)
            FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
            WHERE d.tenant_id = $1 AND d.id = $2
            """,
            [tenantID, id]
        ).first else { throw StoreError.notFound(resource: "webhook delivery") }
        return try withAttempts([WebhookDeliveryRecord.decode(row)], on: connection)[0]
    }

    private static func withAttempts(_ deliveries: [WebhookDeliveryRecord], on connection: PostgresConnection) throws -> [WebhookDeliveryRecord] {
        guard !deliveries.isEmpty else { return deliveries }
        // The attempts in webhook_attempts, and the one that delivered it, which the delivery's own
        // row holds (migration 0019): the last made, but ordered by start like the others, as an
        // attempt whose lease was taken over may be recorded after it.
        let rows = try connection.query(
            """
            SELECT delivery_id, started_at, duration_ms, status_code, error, response_excerpt FROM (
                SELECT a.*, row_number() OVER (PARTITION BY a.delivery_id ORDER BY a.started_at DESC, a.id DESC) AS recency
                FROM (
                    SELECT delivery_id, started_at, duration_ms, status_code, error, response_excerpt, id
                    FROM webhook_attempts WHERE delivery_id = ANY($1)
                    UNION ALL
                    SELECT id, delivered_started_at, delivered_duration_ms, last_status_code, last_error,
                           delivered_response_excerpt, 9223372036854775807
                    FROM webhook_deliveries WHERE id = ANY($1) AND delivered_started_at IS NOT NULL
                ) a
            ) a
            WHERE recency <= $2
            ORDER BY delivery_id, started_at, id
            """,
            [deliveries.map(\.id), attemptsShown]
        )
        var attempts: [String: [WebhookAttemptRecord]] = [:]
        for row in rows {
            attempts[try row.decode("delivery_id"), default: []].append(try WebhookAttemptRecord.decode(row))
        }
        return deliveries.map { delivery in
            var delivery = delivery
            delivery.attempts = attempts[delivery.id] ?? []
            return delivery
        }
    }
}
