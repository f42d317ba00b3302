import FerryCore
import Foundation
import Postgres

/// A delegate's webhook endpoint as the tenant sees it; the secrets are never part of it.
public struct WebhookEndpointRecord: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable {
        case active
        /// Nothing is sent; pending deliveries wait until the tenant enables it again. Events
        /// written meanwhile get no delivery (the fan-out skips it): they stay in the event log.
        case disabled
    }

    public var id: String
    public var tenantID: String
    public var url: String
    /// nil: every event type except the opt-in `dataTask.didReceiveData`.
    public var events: Set<EventType>?
    public var status: Status
    public var disabledReason: String?
    public var disabledAt: Date?
    /// Since when every attempt has failed; nil while the endpoint answers.
    public var failingSince: Date?
    /// Deliveries in flight at once to it (`DelegateSpec.maximumInFlight`).
    public var maximumInFlight: Int
    /// Until when the secret replaced by the last rotation also signs.
    public var previousSecretExpiresAt: Date?
    /// The session or task whose delegate it was created for.
    public var sessionID: String?
    public var taskID: String?
    public var createdAt: Date

    static let columns = """
        w.id, w.tenant_id, w.url, w.events, w.status, w.disabled_reason, w.disabled_at, w.failing_since, w.maximum_in_flight, \
        CASE WHEN w.previous_secret_until > now() THEN w.previous_secret_until END AS previous_secret_until, \
        w.session_id, w.task_id, w.created_at
        """

    static func decode(_ row: PostgresRow) throws -> WebhookEndpointRecord {
        WebhookEndpointRecord(
            id: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            url: try row.decode("url"),
            events: try WebhookEndpointRows.eventFilter(row.decode("events", as: [String]?.self)),
            status: Status(rawValue: try row.decode("status")) ?? .disabled,
            disabledReason: try row.decode("disabled_reason"),
            disabledAt: try row.decode("disabled_at"),
            failingSince: try row.decode("failing_since"),
            maximumInFlight: try row.decode("maximum_in_flight"),
            previousSecretExpiresAt: try row.decode("previous_secret_until"),
            sessionID: try row.decode("session_id"),
            taskID: try row.decode("task_id"),
            createdAt: try row.decode("created_at")
        )
    }
}

/// Which event types an endpoint hears.
public enum DelegateEventFilter {
    /// Opt-in types: sent only when listed explicitly (each may be many per second).
    public static let optIn: Set<EventType> = [.dataTaskDidReceiveData]

    public static func subscribes(_ events: Set<EventType>?, to type: EventType) -> Bool {
        guard let events else { return !optIn.contains(type) }
        return events.contains(type)
    }
}
