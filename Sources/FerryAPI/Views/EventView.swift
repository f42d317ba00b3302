import FerryCore
import FerryStore
import Foundation
import Hummingbird

/// One event of the log: the webhook body's `type`, `timestamp` and `data`, with where it
/// stands in the log (as the tenant's cursor) and, for decision events, who decided.
///
/// Written with `JSONWriter` rather than `JSONEncoder`: `data` is spliced in as PostgreSQL
/// stores it, the bytes the webhooks carry, instead of being parsed into a `JSONValue` and
/// encoded again (three quarters of the time to list events).
struct EventView {
    var event: EventRecord
    var cursor: EventCursor

    init(_ event: EventRecord, cursor: EventCursor) {
        self.event = event
        self.cursor = cursor
    }

    /// `{data: [...], nextCursor}` as `ListView` writes it, of these events.
    static func listResponse(_ events: [EventRecord], cursor: EventCursor, nextCursor: String?) -> Response {
        JSONResponse.make(bytes: list(events, cursor: cursor, nextCursor: nextCursor))
    }

    static func list(_ events: [EventRecord], cursor: EventCursor, nextCursor: String?) -> [UInt8] {
        JSONWriter.list(events, nextCursor: nextCursor, bytesPerItem: 512) { EventView($0, cursor: cursor).write(to: &$1) }
    }

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.raw("data", event.dataJSON)
            json.string("decidedBy", event.decidedBy)
            json.string("id", event.id)
            json.integer("position", cursor.encode(event.position))
            json.integer("sequence", event.sequence)
            json.string("sessionId", event.sessionID)
            json.string("taskId", event.taskID)
            json.date("timestamp", event.createdAt)
            json.string("type", event.type)
        }
    }
}
