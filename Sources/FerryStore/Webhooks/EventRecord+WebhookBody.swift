import FerryCore
import Foundation

extension EventRecord {
    /// The most a webhook body may weigh. Event data is small (progress events carry totals,
    /// not bytes); anything larger is replaced by a stub that points at the event log.
    public static let maximumWebhookBodyBytes = 256 * 1024

    /// The Standard Webhooks body `{"data", "timestamp", "type"}` — what a webhook POSTs and what
    /// an SSE `data:` line carries. The same bytes for every delivery of the event, on one line.
    /// `cursor`: the tenant's, for a stub's link to a session event by its position (made only
    /// then: deriving it is an HMAC, and nearly every body is sent whole).
    public func webhookBody(cursor: @autoclosure () -> EventCursor) -> [UInt8] {
        let body = Self.body(type: type, timestamp: createdAt, dataJSON: dataJSON)
        guard body.count > Self.maximumWebhookBodyBytes else { return body }
        var stub: [String: JSONValue] = [
            "sessionId": .string(sessionID),
            "sequence": .number(Double(sequence)),
            "truncated": .bool(true),
            "event": .string(taskID.map { "/v1/tasks/\($0)/events?after=\(sequence - 1)&limit=1" } ?? "/v1/sessions/\(sessionID)/events?after=\(cursor().encode(position - 1))&limit=1"),
        ]
        if let taskID { stub["taskId"] = .string(taskID) }
        return Self.body(type: type, timestamp: createdAt, dataJSON: String(decoding: JSONValue.object(stub).serialized(), as: UTF8.self))
    }

    private static func body(type: String, timestamp: Date, dataJSON: String) -> [UInt8] {
        var bytes = Array(#"{"data":"#.utf8)
        bytes += dataJSON.utf8
        bytes += #","timestamp":"#.utf8
        bytes += JSONValue.string(ISO8601Parsing.string(from: timestamp)).serialized()
        bytes += #","type":"#.utf8
        bytes += JSONValue.string(type).serialized()
        bytes += "}".utf8
        return bytes
    }
}
