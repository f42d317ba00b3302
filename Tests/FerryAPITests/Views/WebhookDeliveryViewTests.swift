import FerryCore
@testable import FerryStore
import Foundation
import Testing

@testable import FerryAPI

@Suite("WebhookDeliveryView writes a delivery as JSONEncoder would")
struct WebhookDeliveryViewTests {
    private let cursor = EventCursors(key: Array(0..<32)).forTenant("ten_a")

    private func delivery(id: String, pending: Bool) -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(
            id: id, tenantID: "ten_a", endpointID: "whe_1", eventID: "evt_1", eventType: "task.didCreateTask",
            eventPosition: 77, sessionID: "ses_1", taskID: pending ? nil : "tsk_1", sequence: 3, isDecision: !pending,
            status: pending ? .pending : .delivered, attemptCount: pending ? 0 : 2,
            nextAttemptAt: pending ? Date(timeIntervalSince1970: 1_790_000_001.5) : nil,
            lastStatusCode: pending ? nil : 200, lastError: pending ? nil : "answered \"500\"\n",
            waitingReason: pending ? "endpoint disabled: the endpoint answered 410 Gone" : nil,
            createdAt: Date(timeIntervalSince1970: 1_790_000_000.25), deliveredAt: pending ? nil : Date(timeIntervalSince1970: 1_790_000_002),
            attempts: pending ? [] : [
                WebhookAttemptRecord(startedAt: Date(timeIntervalSince1970: 1_790_000_001), durationMilliseconds: 12, statusCode: 500,
                                     error: "answered 500", responseExcerpt: "down / out \u{1}"),
                WebhookAttemptRecord(startedAt: Date(timeIntervalSince1970: 1_790_000_002), durationMilliseconds: 3, statusCode: nil,
                                     error: nil, responseExcerpt: nil),
            ]
        )
    }

    /// The document the Encodable view wrote, built independently: `JSONValue.serialized()` is
    /// what `JSONResponse`'s encoder writes (sorted keys, no escaped slashes).
    private func expected(_ delivery: WebhookDeliveryRecord) -> JSONValue {
        func date(_ date: Date?) -> JSONValue { date.map { .string(ISO8601Parsing.string(from: $0)) } ?? .null }
        func text(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        func number(_ number: Int?) -> JSONValue { number.map { .number(Double($0)) } ?? .null }
        return .object([
            "id": .string(delivery.id), "endpointId": .string(delivery.endpointID), "eventId": .string(delivery.eventID),
            "eventType": .string(delivery.eventType), "eventPosition": .number(Double(cursor.encode(delivery.eventPosition))),
            "sessionId": .string(delivery.sessionID), "taskId": text(delivery.taskID), "sequence": .number(Double(delivery.sequence)),
            "isDecision": .bool(delivery.isDecision), "status": .string(delivery.status.rawValue),
            "attemptCount": number(delivery.attemptCount), "nextAttemptAt": date(delivery.nextAttemptAt),
            "lastStatusCode": number(delivery.lastStatusCode), "lastError": text(delivery.lastError),
            "waitingReason": text(delivery.waitingReason), "createdAt": date(delivery.createdAt), "deliveredAt": date(delivery.deliveredAt),
            "attempts": .array(delivery.attempts.map { attempt in
                .object([
                    "startedAt": date(attempt.startedAt), "durationMilliseconds": number(attempt.durationMilliseconds),
                    "statusCode": number(attempt.statusCode), "error": text(attempt.error), "responseExcerpt": text(attempt.responseExcerpt),
                ])
            }),
            "links": .object([
                "self": .string("/v1/webhooks/deliveries/\(delivery.id)"),
                "retry": .string("/v1/webhooks/deliveries/\(delivery.id)/retry"),
                "endpoint": .string("/v1/webhooks/endpoints/\(delivery.endpointID)"),
            ]),
        ])
    }

    @Test("a page, and one delivery alone: the bytes JSONResponse's encoder writes for the same members")
    func sameBytesAsTheEncoder() {
        let deliveries = [delivery(id: "whd_1", pending: false), delivery(id: "whd_2", pending: true)]
        let page = JSONWriter.list(deliveries.map { WebhookDeliveryView($0, cursor: cursor) }, nextCursor: "whd_2")
        let reference = JSONValue.object(["data": .array(deliveries.map(expected)), "nextCursor": .string("whd_2")])
        #expect(String(decoding: page, as: UTF8.self) == String(decoding: reference.serialized(), as: UTF8.self))

        let one = JSONWriter.document(WebhookDeliveryView(deliveries[0], cursor: cursor))
        #expect(one == expected(deliveries[0]).serialized())
        let empty = JSONWriter.list([WebhookDeliveryView](), nextCursor: nil)
        #expect(String(decoding: empty, as: UTF8.self) == #"{"data":[],"nextCursor":null}"#)
    }
}
