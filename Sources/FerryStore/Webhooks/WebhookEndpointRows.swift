import FerryCore
import Foundation
import Postgres

/// Creating a delegate's endpoint inside the transaction that creates (or re-attaches) its
/// session or task, so a delegate exists exactly when its owner does.
enum WebhookEndpointRows {
    /// Makes the endpoint of `delegate` the session's delegate (replacing an earlier one when a
    /// background session is re-attached). Returns the endpoint id.
    @discardableResult
    static func attach(_ delegate: DelegateSpec, toSession sessionID: String, tenantID: String, on connection: PostgresConnection) throws -> String {
        let id = try insert(delegate, tenantID: tenantID, sessionID: sessionID, taskID: nil, on: connection)
        try connection.execute("UPDATE sessions SET delegate_endpoint_id = $2 WHERE id = $1", [sessionID, id])
        return id
    }

    /// Makes the endpoint of `delegate` the task's own delegate, overriding its session's.
    @discardableResult
    static func attach(_ delegate: DelegateSpec, toTask taskID: String, sessionID: String, tenantID: String, on connection: PostgresConnection) throws -> String {
        let id = try insert(delegate, tenantID: tenantID, sessionID: sessionID, taskID: taskID, on: connection)
        try connection.execute("UPDATE tasks SET delegate_endpoint_id = $2 WHERE id = $1", [taskID, id])
        return id
    }

    private static func insert(
        _ delegate: DelegateSpec, tenantID: String, sessionID: String, taskID: String?, on connection: PostgresConnection
    ) throws -> String {
        let id = IDs.make("whe")
        // Callers that show the secret pass one; otherwise it is made here and never shown.
        let secret = delegate.secret ?? {
            var random = SystemRandomNumberGenerator()
            return WebhookSecret.generate(using: &random)
        }()
        try connection.execute(
            """
            INSERT INTO webhook_endpoints (id, tenant_id, url, secret, events, session_id, task_id, maximum_in_flight)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            [
                id, tenantID, delegate.url, secret, delegate.events.map { $0.map(\.rawValue).sorted() }, sessionID, taskID,
                delegate.maximumInFlight ?? DelegateSpec.defaultMaximumInFlight,
            ]
        )
        return id
    }

    /// The stored filter as types; names no longer in the catalogue are ignored.
    static func eventFilter(_ names: [String]?) -> Set<EventType>? {
        names.map { Set($0.compactMap(EventType.init(rawValue:))) }
    }
}
