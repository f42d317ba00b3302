import FerryCore
import FerryStore
import Foundation
import Hummingbird

/// One event of the log: the webhook body's `type`, `timestamp` and `data`, with where it
/// stands in the log (as the tenant's cursor) and, for decision events, who decided.
///
/// Written directly rather than through `JSONEncoder`: `data` is spliced in as PostgreSQL
/// stores it, the bytes the webhooks carry, instead of being parsed into a `JSONValue` and
/// encoded again (three quarters of the time to list events). The other members are written
/// as `JSONResponse` writes them: sorted keys, nulls included, dates as `ISO8601Parsing` gives.
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
        var bytes = Array(#"{"data":["#.utf8)
        bytes.reserveCapacity(events.count * 512)
        for (index, event) in events.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            EventView(event, cursor: cursor).write(into: &bytes)
        }
        bytes += #"],"nextCursor":"#.utf8
        writeOptional(nextCursor, into: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The members in code point order, as `.sortedKeys` orders them.
    func write(into bytes: inout [UInt8]) {
        bytes += #"{"data":"#.utf8
        bytes += event.dataJSON.utf8
        bytes += #","decidedBy":"#.utf8
        Self.writeOptional(event.decidedBy, into: &bytes)
        bytes += #","id":"#.utf8
        JSONValue.write(string: event.id, into: &bytes)
        bytes += #","position":"#.utf8
        bytes += String(cursor.encode(event.position)).utf8
        bytes += #","sequence":"#.utf8
        bytes += String(event.sequence).utf8
        bytes += #","sessionId":"#.utf8
        JSONValue.write(string: event.sessionID, into: &bytes)
        bytes += #","taskId":"#.utf8
        Self.writeOptional(event.taskID, into: &bytes)
        bytes += #","timestamp":"#.utf8
        JSONValue.write(string: ISO8601Parsing.string(from: event.createdAt), into: &bytes)
        bytes += #","type":"#.utf8
        JSONValue.write(string: event.type, into: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    private static func writeOptional(_ string: String?, into bytes: inout [UInt8]) {
        if let string { JSONValue.write(string: string, into: &bytes) } else { bytes += "null".utf8 }
    }
}
