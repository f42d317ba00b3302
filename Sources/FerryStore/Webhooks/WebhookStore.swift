import FerryCore
import Foundation
import Postgres

/// The tenant's view of its webhook endpoints and deliveries; always scoped by tenant.
public struct WebhookStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// How long a rotated-out secret keeps signing, so receivers can switch without losing a delivery.
    public static let rotationOverlap: Duration = .seconds(24 * 3600)

    /// A page of the tenant's endpoints, oldest first; `after` is the last id of the previous page.
    public func endpoints(tenantID: String, limit: Int, after: String?) async throws -> Page<WebhookEndpointRecord> {
        try await pool.withConnection { connection in
            try Page.inCreationOrder(
                of: "webhook_endpoints", as: "w", columns: WebhookEndpointRecord.columns, tenantID: tenantID, limit: limit, after: after,
                resource: "webhook endpoint", on: connection, decode: WebhookEndpointRecord.decode, cursor: \.id
            )
        }
    }

    public func endpoint(tenantID: String, id: String) async throws -> WebhookEndpointRecord {
        try await pool.withConnection { connection in
            try Self.endpoint(tenantID: tenantID, id: id, on: connection)
        }
    }

    /// The session's delegate, or nil when it has the system-provided one.
    public func delegate(tenantID: String, sessionID: String) async throws -> WebhookEndpointRecord? {
        try await pool.withConnection { connection in
            guard let row = try connection.query(
                "SELECT delegate_endpoint_id FROM sessions WHERE tenant_id = $1 AND id = $2", [tenantID, sessionID]
            ).first else { throw StoreError.notFound(resource: "session") }
            guard let id = try row.decode(0, as: String?.self) else { return nil }
            return try Self.endpoint(tenantID: tenantID, id: id, on: connection)
        }
    }

    /// The delegate that hears the task: its own (`isOwn`) or its session's; nil when neither has one.
    public func delegate(tenantID: String, taskID: String) async throws -> (endpoint: WebhookEndpointRecord, isOwn: Bool)? {
        try await pool.withConnection { connection in
            guard let row = try connection.query(
                """
                SELECT t.delegate_endpoint_id AS own, s.delegate_endpoint_id AS inherited
                FROM tasks t JOIN sessions s ON s.id = t.session_id
                WHERE t.tenant_id = $1 AND t.id = $2
                """,
                [tenantID, taskID]
            ).first else { throw StoreError.notFound(resource: "task") }
            if let own = try row.decode("own", as: String?.self) {
                return (try Self.endpoint(tenantID: tenantID, id: own, on: connection), true)
            }
            guard let inherited = try row.decode("inherited", as: String?.self) else { return nil }
            return (try Self.endpoint(tenantID: tenantID, id: inherited, on: connection), false)
        }
    }

    /// Re-enables a disabled endpoint: its pending deliveries become due at once. Run again if
    /// PostgreSQL breaks a deadlock with it: it locks the endpoint, then its deliveries, and an
    /// attempt being recorded may lock a delivery, then its endpoint.
    public func enable(tenantID: String, id: String) async throws -> WebhookEndpointRecord {
        try await pool.withRetriedTransaction { connection in
            let updated = try connection.execute(
                """
                UPDATE webhook_endpoints SET status = 'active', disabled_reason = NULL, disabled_at = NULL,
                                             failing_since = NULL, updated_at = now()
                WHERE tenant_id = $1 AND id = $2
                """,
                [tenantID, id]
            )
            guard updated == 1 else { throw StoreError.notFound(resource: "webhook endpoint") }
            try connection.execute(
                """
                UPDATE webhook_deliveries SET next_attempt_at = now(), updated_at = now()
                WHERE endpoint_id = $1 AND status = 'pending' AND NOT is_decision AND next_attempt_at > now()
                """,
                [id]
            )
            try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.events, WebhookLedger.deliveriesChangedPayload])
            return try Self.endpoint(tenantID: tenantID, id: id, on: connection)
        }
    }

    /// Replaces the endpoint's secret with `newSecret`; the old one keeps signing (both appear in
    /// `webhook-signature`) for `rotationOverlap`. A second rotation within the overlap drops the
    /// oldest secret.
    public func rotateSecret(tenantID: String, endpointID: String, newSecret: String) async throws -> WebhookEndpointRecord {
        let overlapSeconds = Double(Self.rotationOverlap.components.seconds)
        return try await pool.withConnection { connection in
            let updated = try connection.execute(
                """
                UPDATE webhook_endpoints SET previous_secret = secret, secret = $3,
                    previous_secret_until = now() + make_interval(secs => $4), updated_at = now()
                WHERE tenant_id = $1 AND id = $2
                """,
                [tenantID, endpointID, newSecret, overlapSeconds]
            )
            guard updated == 1 else { throw StoreError.notFound(resource: "webhook endpoint") }
            return try Self.endpoint(tenantID: tenantID, id: endpointID, on: connection)
        }
    }

    static func endpoint(tenantID: String, id: String, on connection: PostgresConnection) throws -> WebhookEndpointRecord {
        guard let row = try connection.query(
            "SELECT \(WebhookEndpointRecord.columns) FROM webhook_endpoints w WHERE w.tenant_id = $1 AND w.id = $2", [tenantID, id]
        ).first else { throw StoreError.notFound(resource: "webhook endpoint") }
        return try WebhookEndpointRecord.decode(row)
    }
}
