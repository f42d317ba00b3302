import FerryCore
import Foundation
import Postgres

/// A delivery this instance is attempting now, with everything needed to send it.
public struct ClaimedDelivery: Sendable {
    public var deliveryID: String
    /// Fences the result: it is written only while this lease is still the delivery's.
    public var leaseToken: Int64
    public var endpointID: String
    public var url: String
    /// `whsec_…` secrets to sign with: the current one, then the previous one during a rotation.
    public var secrets: [String]
    public var event: EventRecord
    /// Attempts made before this one.
    public var previousAttempts: Int
    public var isDecision: Bool
    /// The ordering stream (a task, or a session's own events) and the event's place in it.
    public var streamID: String

    static let columns = """
        d.id AS delivery_id, d.lease_token, d.endpoint_id, d.attempts, d.is_decision, d.stream_id, w.url, w.secret, \
        CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END AS previous_secret, \(EventRecord.columnsWithDelivery)
        """

    /// The deliveries with these ids, in stream order (what a claim hands to its sender).
    static func load(ids: [String], on connection: PostgresConnection) throws -> [ClaimedDelivery] {
        guard !ids.isEmpty else { return [] }
        return try connection.query(
            """
            SELECT \(columns)
            FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
            WHERE d.id = ANY($1)
            ORDER BY e.position
            """,
            [ids]
        ).map(decode)
    }

    static func decode(_ row: PostgresRow) throws -> ClaimedDelivery {
        var secrets = [try row.decode("secret", as: String.self)]
        if let previous = try row.decode("previous_secret", as: String?.self) { secrets.append(previous) }
        return ClaimedDelivery(
            deliveryID: try row.decode("delivery_id"),
            leaseToken: try row.decode("lease_token"),
            endpointID: try row.decode("endpoint_id"),
            url: try row.decode("url"),
            secrets: secrets,
            event: try EventRecord.decode(row),
            previousAttempts: try row.decode("attempts"),
            isDecision: try row.decode("is_decision"),
            streamID: try row.decode("stream_id")
        )
    }
}

/// What one attempt found, as recorded. Never a decision's reply.
public struct AttemptReport: Sendable {
    public var startedAt: Date
    public var duration: Duration
    public var statusCode: Int?
    public var error: String?
    public var responseExcerpt: String?

    public init(startedAt: Date, duration: Duration, statusCode: Int?, error: String?, responseExcerpt: String?) {
        self.startedAt = startedAt
        self.duration = duration
        self.statusCode = statusCode
        self.error = error
        self.responseExcerpt = responseExcerpt
    }
}

/// What happens after an attempt: the delivery's new state and what the endpoint's health becomes.
public struct DeliveryPlan: Sendable, Equatable {
    public var status: WebhookDeliveryRecord.Status
    /// When to try again (pending deliveries).
    public var nextAttemptAt: Date?
    public var endpoint: EndpointChange

    public init(status: WebhookDeliveryRecord.Status, nextAttemptAt: Date?, endpoint: EndpointChange) {
        self.status = status
        self.nextAttemptAt = nextAttemptAt
        self.endpoint = endpoint
    }
}

public enum EndpointChange: Sendable, Equatable {
    /// Nothing was learnt about the endpoint (the attempt was never made).
    case unchanged
    /// It answered 2xx: no longer failing.
    case answering
    /// Every attempt has failed since this moment.
    case failing(since: Date)
    /// Stop sending to it until the tenant enables it again.
    case disable(reason: String)
}

/// A ready head of a task stream that a claim saw but left for want of room: what a delivery
/// slot of the same endpoint may take next (`WebhookLedger.claimNext(orOneOf:)`), once checked again.
public struct DeliveryCandidate: Sendable {
    public var deliveryID: String
    public var endpointID: String
    public var streamID: String
    public var sequence: Int64
}
