import FerryCore
import Foundation
import Postgres

/// One event's delivery to one endpoint, with its attempts, as the tenant sees it.
public struct WebhookDeliveryRecord: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable {
        /// Waiting for an attempt: the first, or a retry after a failure (`lastError`).
        case pending
        /// The endpoint answered 2xx.
        case delivered
        /// A decision the receiver did not answer in time (or not with a 2xx JSON object): the
        /// default applied. Not retried on its own: the moment to decide has passed.
        case failed
        /// Every retry of the schedule failed.
        case dead
    }

    public var id: String
    public var tenantID: String
    public var endpointID: String
    /// Also the `webhook-id` header of every attempt.
    public var eventID: String
    public var eventType: String
    public var eventPosition: Int64
    public var sessionID: String
    public var taskID: String?
    public var sequence: Int64
    public var isDecision: Bool
    public var status: Status
    public var attemptCount: Int
    /// When the next attempt is due (pending deliveries only).
    public var nextAttemptAt: Date?
    public var lastStatusCode: Int?
    public var lastError: String?
    /// Why a pending delivery is not being attempted, when something holds it back.
    public var waitingReason: String?
    public var createdAt: Date
    public var deliveredAt: Date?
    /// The most recent attempts, oldest first.
    public var attempts: [WebhookAttemptRecord]

    static let columns = """
        d.id, d.tenant_id, d.endpoint_id, d.event_id, d.event_type, d.event_position, d.session_id, d.task_id, \
        d.sequence, d.is_decision, d.status, d.attempts, d.next_attempt_at, d.last_status_code, d.last_error, \
        d.created_at, d.delivered_at, coalesce(d.lease_expires_at > now(), false) AS in_flight, \
        w.status AS endpoint_status, w.disabled_reason AS endpoint_disabled_reason
        """

    static func decode(_ row: PostgresRow) throws -> WebhookDeliveryRecord {
        let status = Status(rawValue: try row.decode("status")) ?? .pending
        var waitingReason: String?
        if status == .pending {
            if try row.decode("endpoint_status", as: String.self) == WebhookEndpointRecord.Status.disabled.rawValue {
                waitingReason = "endpoint disabled: " + (try row.decode("endpoint_disabled_reason", as: String?.self) ?? "by the tenant")
            } else if try row.decode("in_flight", as: Bool.self) {
                waitingReason = "being attempted now"
            }
        }
        return WebhookDeliveryRecord(
            id: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            endpointID: try row.decode("endpoint_id"),
            eventID: try row.decode("event_id"),
            eventType: try row.decode("event_type"),
            eventPosition: try row.decode("event_position"),
            sessionID: try row.decode("session_id"),
            taskID: try row.decode("task_id"),
            sequence: try row.decode("sequence"),
            isDecision: try row.decode("is_decision"),
            status: status,
            attemptCount: try row.decode("attempts"),
            nextAttemptAt: status == .pending ? try row.decode("next_attempt_at") : nil,
            lastStatusCode: try row.decode("last_status_code"),
            lastError: try row.decode("last_error"),
            waitingReason: waitingReason,
            createdAt: try row.decode("created_at"),
            deliveredAt: try row.decode("delivered_at"),
            attempts: []
        )
    }
}

/// One attempt to deliver.
public struct WebhookAttemptRecord: Sendable, Equatable {
    public var startedAt: Date
    public var durationMilliseconds: Int
    /// The endpoint's HTTP status; nil when it never answered.
    public var statusCode: Int?
    public var error: String?
    /// The start of the endpoint's answer (never for decisions, whose replies may carry credentials).
    public var responseExcerpt: String?

    public init(startedAt: Date, durationMilliseconds: Int, statusCode: Int?, error: String?, responseExcerpt: String?) {
        self.startedAt = startedAt
        self.durationMilliseconds = durationMilliseconds
        self.statusCode = statusCode
        self.error = error
        self.responseExcerpt = responseExcerpt
    }

    static func decode(_ row: PostgresRow) throws -> WebhookAttemptRecord {
        WebhookAttemptRecord(
            startedAt: try row.decode("started_at"),
            durationMilliseconds: try row.decode("duration_ms"),
            statusCode: try row.decode("status_code"),
            error: try row.decode("error"),
            responseExcerpt: try row.decode("response_excerpt")
        )
    }
}
