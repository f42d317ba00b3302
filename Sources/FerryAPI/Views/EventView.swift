import FerryCore
import FerryStore
import Foundation

/// One event of the log: the webhook body's `type`, `timestamp` and `data`, with where it
/// stands in the log (as the tenant's cursor) and, for decision events, who decided.
///
/// Written with `JSONWriter` rather than `JSONEncoder`: `data` is spliced in as PostgreSQL
/// stores it, the bytes the webhooks carry, instead of being parsed into a `JSONValue` and
/// encoded again (three quarters of the time to list events).
struct EventView: JSONWritable {
    static let typicalSize = 512

    var event: EventRecord
    var cursor: EventCursor

    init(_ event: EventRecord, cursor: EventCursor) {
        self.event = event
        self.cursor = cursor
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
