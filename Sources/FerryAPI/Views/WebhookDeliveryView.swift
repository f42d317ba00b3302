import FerryCore
import FerryStore
import Foundation

/// A delivery with its attempts: what the tenant reads to see why a webhook did not arrive.
struct WebhookDeliveryView: Encodable, Sendable {
    var delivery: WebhookDeliveryRecord
    /// The tenant's cursor for the event's position (see `EventCursor`).
    var cursor: EventCursor

    init(_ delivery: WebhookDeliveryRecord, cursor: EventCursor) {
        self.delivery = delivery
        self.cursor = cursor
    }

    enum CodingKeys: String, CodingKey {
        case id, endpointId, eventId, eventType, eventPosition, sessionId, taskId, sequence, isDecision
        case status, attemptCount, nextAttemptAt, lastStatusCode, lastError, waitingReason
        case createdAt, deliveredAt, attempts, links
    }

    struct AttemptView: Encodable, Sendable {
        var startedAt: Date
        var durationMilliseconds: Int
        var statusCode: Int?
        var error: String?
        var responseExcerpt: String?

        enum CodingKeys: String, CodingKey {
            case startedAt, durationMilliseconds, statusCode, error, responseExcerpt
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(startedAt, forKey: .startedAt)
            try container.encode(durationMilliseconds, forKey: .durationMilliseconds)
            try container.encode(statusCode, forKey: .statusCode)
            try container.encode(error, forKey: .error)
            try container.encode(responseExcerpt, forKey: .responseExcerpt)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(delivery.id, forKey: .id)
        try container.encode(delivery.endpointID, forKey: .endpointId)
        try container.encode(delivery.eventID, forKey: .eventId)
        try container.encode(delivery.eventType, forKey: .eventType)
        try container.encode(cursor.encode(delivery.eventPosition), forKey: .eventPosition)
        try container.encode(delivery.sessionID, forKey: .sessionId)
        try container.encode(delivery.taskID, forKey: .taskId)
        try container.encode(delivery.sequence, forKey: .sequence)
        try container.encode(delivery.isDecision, forKey: .isDecision)
        try container.encode(delivery.status.rawValue, forKey: .status)
        try container.encode(delivery.attemptCount, forKey: .attemptCount)
        try container.encode(delivery.nextAttemptAt, forKey: .nextAttemptAt)
        try container.encode(delivery.lastStatusCode, forKey: .lastStatusCode)
        try container.encode(delivery.lastError, forKey: .lastError)
        try container.encode(delivery.waitingReason, forKey: .waitingReason)
        try container.encode(delivery.createdAt, forKey: .createdAt)
        try container.encode(delivery.deliveredAt, forKey: .deliveredAt)
        try container.encode(
            delivery.attempts.map {
                AttemptView(
                    startedAt: $0.startedAt, durationMilliseconds: $0.durationMilliseconds, statusCode: $0.statusCode,
                    error: $0.error, responseExcerpt: $0.responseExcerpt
                )
            },
            forKey: .attempts
        )
        try container.encode(
            [
                "self": "/v1/webhooks/deliveries/\(delivery.id)",
                "retry": "/v1/webhooks/deliveries/\(delivery.id)/retry",
                "endpoint": "/v1/webhooks/endpoints/\(delivery.endpointID)",
            ],
            forKey: .links
        )
    }
}
