import FerryCore
import FerryStore
import Foundation

/// A delegate's endpoint. `secret` appears only in the answer that set it (creation, rotation).
struct WebhookEndpointView: Encodable, Sendable {
    var endpoint: WebhookEndpointRecord
    var secret: String?

    init(_ endpoint: WebhookEndpointRecord, secret: String? = nil) {
        self.endpoint = endpoint
        self.secret = secret
    }

    enum CodingKeys: String, CodingKey {
        case id, url, events, maximumInFlight, status, disabledReason, disabledAt, failingSince, previousSecretExpiresAt
        case sessionId, taskId, createdAt, secret, links
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(endpoint.id, forKey: .id)
        try container.encode(endpoint.url, forKey: .url)
        try container.encode(endpoint.events.map { $0.map(\.rawValue).sorted() }, forKey: .events)
        try container.encode(endpoint.maximumInFlight, forKey: .maximumInFlight)
        try container.encode(endpoint.status.rawValue, forKey: .status)
        try container.encode(endpoint.disabledReason, forKey: .disabledReason)
        try container.encode(endpoint.disabledAt, forKey: .disabledAt)
        try container.encode(endpoint.failingSince, forKey: .failingSince)
        try container.encode(endpoint.previousSecretExpiresAt, forKey: .previousSecretExpiresAt)
        try container.encode(endpoint.sessionID, forKey: .sessionId)
        try container.encode(endpoint.taskID, forKey: .taskId)
        try container.encode(endpoint.createdAt, forKey: .createdAt)
        try container.encodeIfPresent(secret, forKey: .secret)
        try container.encode(
            [
                "self": "/v1/webhooks/endpoints/\(endpoint.id)",
                "deliveries": "/v1/webhooks/deliveries?endpointId=\(endpoint.id)",
            ],
            forKey: .links
        )
    }
}
