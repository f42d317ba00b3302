import FerryCore
import FerryStore
import Foundation

/// One event of the log: the webhook body's `type`, `timestamp` and `data`, with where it
/// stands in the log (as the tenant's cursor) and, for decision events, who decided.
struct EventView: Encodable, Sendable {
    var event: EventRecord
    var cursor: EventCursor

    init(_ event: EventRecord, cursor: EventCursor) {
        self.event = event
        self.cursor = cursor
    }

    enum CodingKeys: String, CodingKey {
        case id, position, sessionId, taskId, sequence, type, timestamp, data, decidedBy
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(event.id, forKey: .id)
        try container.encode(cursor.encode(event.position), forKey: .position)
        try container.encode(event.sessionID, forKey: .sessionId)
        try container.encode(event.taskID, forKey: .taskId)
        try container.encode(event.sequence, forKey: .sequence)
        try container.encode(event.type, forKey: .type)
        try container.encode(event.createdAt, forKey: .timestamp)
        try container.encode(event.data, forKey: .data)
        try container.encode(event.decidedBy, forKey: .decidedBy)
    }
}
