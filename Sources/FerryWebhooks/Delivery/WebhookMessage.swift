import FerryCore
import FerryStore
import Foundation

/// One Standard Webhooks request for an event: the body every delivery of the event shares,
/// and the headers of this attempt (`webhook-id` is the event id, the same on every retry;
/// `webhook-timestamp` is when this attempt is made, for the receiver's replay check).
struct WebhookMessage: Sendable {
    let id: String
    let timestamp: Int
    let body: [UInt8]
    /// One `v1,` entry per secret: during a rotation the old and the new secret both sign.
    let signature: String

    /// Fails only if none of the stored secrets is usable, which validation prevents.
    /// `cursors`: for the link in a stub body (`EventRecord.webhookBody`), derived only for one.
    init(event: EventRecord, secrets: [String], sentAt: Date, cursors: EventCursors) throws(WebhookSecretError) {
        var keys: [[UInt8]] = []
        var firstError: WebhookSecretError?
        for secret in secrets {
            do {
                keys.append(try WebhookSecret.parse(secret))
            } catch {
                firstError = firstError ?? error
            }
        }
        if keys.isEmpty { throw firstError ?? .missingPrefix }
        id = event.id
        timestamp = Int(sentAt.timeIntervalSince1970)
        body = event.webhookBody(cursor: cursors.forTenant(event.tenantID))
        signature = WebhookSignature.sign(id: id, timestamp: timestamp, body: body, secrets: keys)
    }

    /// The request's header lines. `Expect:` (empty) stops curl from waiting for a
    /// `100 Continue` that many receivers never send.
    var headerLines: [String] {
        [
            "content-type: application/json",
            "webhook-id: \(id)",
            "webhook-timestamp: \(timestamp)",
            "webhook-signature: \(signature)",
            "Expect:",
        ]
    }
}
