import FerryCore
import FerryStore
import Foundation
import Testing

@testable import FerryAPI

@Suite("EventView writes a list of events as JSONEncoder would, with data as stored")
struct EventViewTests {
    private let cursor = EventCursors(key: Array(0..<32)).forTenant("ten_a")
    private let createdAt = Date(timeIntervalSince1970: 1_790_000_000.123)

    private func event(task: String?, decidedBy: String?, data: String) -> EventRecord {
        EventRecord(
            id: "evt_\"quoted\"", position: 41, tenantID: "ten_a", sessionID: "ses_1", taskID: task, sequence: 7,
            type: "task.willPerformHTTPRedirection", dataJSON: data, createdAt: createdAt, decidedBy: decidedBy
        )
    }

    /// With `data` already compact and sorted, as PostgreSQL never returns it, the whole page is
    /// what the encoder would write: every other member is written as it wrote them.
    @Test("the same bytes as JSONResponse's encoder: sorted keys, nulls, escapes, dates")
    func sameBytesAsTheEncoder() throws {
        let events = [
            event(task: "tsk_1", decidedBy: nil, data: #"{"a":1,"b":"x/y"}"#),
            event(task: nil, decidedBy: "receiver", data: #"{"list":[1,2],"nested":{"c":null}}"#),
        ]
        let written = JSONWriter.list(events.map { EventView($0, cursor: cursor) }, nextCursor: "c\"1")
        let expected: JSONValue = .object([
            "data": .array(events.map { event in
                .object([
                    "data": try! JSONValue.parse(Array(event.dataJSON.utf8)),
                    "decidedBy": event.decidedBy.map(JSONValue.string) ?? .null,
                    "id": .string(event.id),
                    "position": .number(Double(cursor.encode(event.position))),
                    "sequence": .number(Double(event.sequence)),
                    "sessionId": .string(event.sessionID),
                    "taskId": event.taskID.map(JSONValue.string) ?? .null,
                    "timestamp": .string(ISO8601Parsing.string(from: event.createdAt)),
                    "type": .string(event.type),
                ])
            }),
            "nextCursor": .string("c\"1"),
        ])
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: try JSONResponse.encoder.encode(expected), as: UTF8.self))
    }

    @Test("data is spliced as stored: PostgreSQL's spacing and numbers no Double holds stay as they are")
    func dataVerbatim() throws {
        let stored = #"{"n": 123456789012345678901, "s": "é"}"#
        let written = JSONWriter.list([EventView(event(task: "tsk_1", decidedBy: nil, data: stored), cursor: cursor)], nextCursor: nil)
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.hasPrefix(#"{"data":[{"data":"# + stored + ","))
        #expect(text.hasSuffix(#"],"nextCursor":null}"#))
        #expect((try? JSONValue.parse(written)) != nil)
    }
}
