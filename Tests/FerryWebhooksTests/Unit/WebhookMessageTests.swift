import FerryCore
import FerryStore
import Foundation
import Testing

@testable import FerryWebhooks

@Suite("Webhook messages: Standard Webhooks body and headers")
struct WebhookMessageTests {
    private let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    private let sentAt = Date(timeIntervalSince1970: 1_700_000_123.75)
    private let cursors = EventCursors(key: [UInt8](repeating: 5, count: 32))

    private func event(
        data: String = #"{"sequence": 3, "taskId": "tsk_1", "sessionId": "ses_1", "totalBytesWritten": 9007199254740993}"#,
        taskID: String? = "tsk_1"
    ) -> EventRecord {
        EventRecord(
            id: "evt_abc", position: 42, tenantID: "ten_1", sessionID: "ses_1", taskID: taskID, sequence: 3,
            type: "downloadTask.didWriteData", dataJSON: data, createdAt: Date(timeIntervalSince1970: 1_700_000_000.5), decidedBy: nil
        )
    }

    @Test func bodyIsTypeTimestampAndTheStoredData() throws {
        let message = try WebhookMessage(event: event(), secrets: [secret], sentAt: sentAt, cursors: cursors)
        let text = String(decoding: message.body, as: UTF8.self)
        #expect(text == #"{"data":{"sequence": 3, "taskId": "tsk_1", "sessionId": "ses_1", "totalBytesWritten": 9007199254740993},"timestamp":"2023-11-14T22:13:20.500Z","type":"downloadTask.didWriteData"}"#)
        // Large integers are not rounded through a Double.
        #expect(text.contains("9007199254740993"))
        #expect(try JSONValue.parse(message.body)["type"] == "downloadTask.didWriteData")
    }

    @Test func headersCarryTheEventIDTheAttemptTimeAndTheSignature() throws {
        let message = try WebhookMessage(event: event(), secrets: [secret], sentAt: sentAt, cursors: cursors)
        #expect(message.headerLines.contains("webhook-id: evt_abc"))
        #expect(message.headerLines.contains("webhook-timestamp: 1700000123"))
        #expect(message.headerLines.contains("content-type: application/json"))
        let key = try WebhookSecret.parse(secret)
        #expect(WebhookSignature.verify(header: message.signature, id: "evt_abc", timestamp: 1_700_000_123, body: message.body, secrets: [key]))
        #expect(message.signature.split(separator: " ").count == 1)
    }

    @Test func duringARotationBothSecretsSign() throws {
        var generator = SplitMix64(seed: 3)
        let newSecret = WebhookSecret.generate(using: &generator)
        let message = try WebhookMessage(event: event(), secrets: [newSecret, secret], sentAt: sentAt, cursors: cursors)
        #expect(message.signature.split(separator: " ").count == 2)
        for text in [newSecret, secret] {
            let key = try WebhookSecret.parse(text)
            #expect(WebhookSignature.verify(header: message.signature, id: message.id, timestamp: message.timestamp, body: message.body, secrets: [key]))
        }
    }

    @Test func anUnusableSecretIsSkippedAndNoneIsAnError() throws {
        let message = try WebhookMessage(event: event(), secrets: [secret, "whsec_short"], sentAt: sentAt, cursors: cursors)
        #expect(message.signature.split(separator: " ").count == 1)
        #expect(throws: WebhookSecretError.self) { try WebhookMessage(event: event(), secrets: ["nope"], sentAt: sentAt, cursors: cursors) }
    }

    @Test func oversizedDataIsReplacedByAPointerToTheLog() throws {
        let huge = #"{"blob": ""# + String(repeating: "x", count: EventRecord.maximumWebhookBodyBytes) + #""}"#
        let message = try WebhookMessage(event: event(data: huge), secrets: [secret], sentAt: sentAt, cursors: cursors)
        #expect(message.body.count < 1024)
        let body = try JSONValue.parse(message.body)
        #expect(body["data"]?["truncated"] == true)
        #expect(body["data"]?["sequence"] == 3)
        #expect(body["data"]?["event"] == "/v1/tasks/tsk_1/events?after=2&limit=1")
    }

    @Test func aSessionEventsPointerUsesTheTenantsCursorNotTheLogsPosition() throws {
        let huge = #"{"blob": ""# + String(repeating: "x", count: EventRecord.maximumWebhookBodyBytes) + #""}"#
        let message = try WebhookMessage(event: event(data: huge, taskID: nil), secrets: [secret], sentAt: sentAt, cursors: cursors)
        let link = try #require(try JSONValue.parse(message.body)["data"]?["event"]?.stringValue)
        let after = try #require(link.split(separator: "after=").last?.split(separator: "&").first.flatMap { Int64($0) })
        #expect(link == "/v1/sessions/ses_1/events?after=\(after)&limit=1")
        #expect(after != 41)
        #expect(cursors.forTenant("ten_1").decode(after) == 41)
    }
}
