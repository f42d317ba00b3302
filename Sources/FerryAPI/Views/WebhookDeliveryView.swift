import FerryCore
import FerryStore
import Foundation

/// A delivery with its attempts: what the tenant reads to see why a webhook did not arrive.
///
/// Written with `JSONWriter`: through `JSONEncoder`, encoding was three quarters of the CPU of
/// listing deliveries.
struct WebhookDeliveryView: JSONWritable {
    static let typicalSize = 768

    var delivery: WebhookDeliveryRecord
    /// The tenant's cursor for the event's position (see `EventCursor`).
    var cursor: EventCursor

    init(_ delivery: WebhookDeliveryRecord, cursor: EventCursor) {
        self.delivery = delivery
        self.cursor = cursor
    }

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.integer("attemptCount", delivery.attemptCount)
            json.array("attempts") { json in
                for attempt in delivery.attempts {
                    json.object { json in
                        json.integer("durationMilliseconds", attempt.durationMilliseconds)
                        json.string("error", attempt.error)
                        json.string("responseExcerpt", attempt.responseExcerpt)
                        json.date("startedAt", attempt.startedAt)
                        json.integer("statusCode", attempt.statusCode)
                    }
                }
            }
            json.date("createdAt", delivery.createdAt)
            json.date("deliveredAt", delivery.deliveredAt)
            json.string("endpointId", delivery.endpointID)
            json.string("eventId", delivery.eventID)
            json.integer("eventPosition", cursor.encode(delivery.eventPosition))
            json.string("eventType", delivery.eventType)
            json.string("id", delivery.id)
            json.bool("isDecision", delivery.isDecision)
            json.string("lastError", delivery.lastError)
            json.integer("lastStatusCode", delivery.lastStatusCode)
            json.object("links") { json in
                json.string("endpoint", "/v1/webhooks/endpoints/\(delivery.endpointID)")
                json.string("retry", "/v1/webhooks/deliveries/\(delivery.id)/retry")
                json.string("self", "/v1/webhooks/deliveries/\(delivery.id)")
            }
            json.date("nextAttemptAt", delivery.nextAttemptAt)
            json.integer("sequence", delivery.sequence)
            json.string("sessionId", delivery.sessionID)
            json.string("status", delivery.status.rawValue)
            json.string("taskId", delivery.taskID)
            json.string("waitingReason", delivery.waitingReason)
        }
    }
}
