import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("task.didSendBodyData: every upload reports its whole body, before its response")
struct UploadProgressTests {
    static let payload = TestOrigin.pattern(count: 300_000, seed: 9)

    private func upload(_ ferry: EngineHarness, to url: String) async throws -> TaskRecord {
        let created = try await ferry.startTask(in: try await ferry.makeSession(), kind: .upload, url: url, method: "PUT", uploadBody: Self.payload)
        return try await ferry.completion(of: created.id)
    }

    private static func integer(_ value: JSONValue?) -> Int {
        if case .number(let number)? = value { return Int(number) }
        return -1
    }

    /// The `bytesSent` and `totalBytesSent` of the task's didSendBodyData events, in order.
    private func progress(_ ferry: EngineHarness, _ task: TaskRecord) async throws -> [(Int, Int)] {
        try await ferry.eventData(of: task.id, type: EventType.taskDidSendBodyData.rawValue).map { data in
            (Self.integer(data["bytesSent"]), Self.integer(data["totalBytesSent"]))
        }
    }

    @Test("a body sent between two heartbeats still has its didSendBodyData, with the total, before didReceiveResponse")
    func smallBody() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body.count)".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run(configure: { $0.heartbeatInterval = .seconds(5) }) { ferry in
            let task = try await upload(ferry, to: origin.url("/in"))
            #expect(task.error == nil)
            let sent = try await progress(ferry, task)
            #expect(sent.last?.1 == Self.payload.count, "\(sent)")
            #expect(sent.map(\.0).reduce(0, +) == Self.payload.count, "\(sent)")
            // Before the response, as in URLSession.
            let types = try await ferry.eventTypes(of: task.id)
            let sentAt = try #require(types.lastIndex(of: EventType.taskDidSendBodyData.rawValue))
            let responseAt = try #require(types.firstIndex(of: EventType.dataTaskDidReceiveResponse.rawValue))
            #expect(sentAt < responseAt, "\(types)")
        }
    }

    @Test("a body sent again after a 307 counts again from 0: no negative step")
    func resentAfterRedirect() async throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/moved": { _, responder in try responder.respond(status: 307, headers: [("Location", "/in")], body: []) },
            "/in": { request, responder in try responder.respond(status: 200, body: Array("\(request.body.count)".utf8)) },
        ]))
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let task = try await upload(ferry, to: origin.url("/moved"))
            #expect(task.error == nil)
            #expect(try await ferry.responseBody(of: task.id) == Array("\(Self.payload.count)".utf8))
            let sent = try await progress(ferry, task)
            #expect(sent.allSatisfy { $0.0 >= 0 && $0.1 >= 0 }, "\(sent)")
            #expect(sent.last?.1 == Self.payload.count, "\(sent)")
        }
    }
}
