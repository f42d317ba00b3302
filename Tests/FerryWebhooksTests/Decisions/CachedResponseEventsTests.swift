import FerryCore
import FerryStore
import FerryTestSupport
import FerryWebhooks
import Foundation
import Synchronization
import Testing
import TestOrigin

@Suite("A data task answered from the URL cache tells its delegate its response, as URLSession does")
struct CachedResponseEventsTests {
    /// Answers the first `dataTask.didReceiveResponse` (the task that fills the cache) with
    /// "allow", and every later one with `later`.
    final class Receiver: Sendable {
        let origin: TestOrigin

        /// `taking`: how long the later answers take.
        init(later: String, taking delay: TimeInterval = 0) throws {
            let answered = Mutex(0)
            origin = try TestOrigin { request, responder in
                let type = (try? JSONValue.parse(request.body))?["type"]?.stringValue ?? ""
                var reply = "{}"
                if type == EventType.dataTaskDidReceiveResponse.rawValue {
                    let count = answered.withLock { count in
                        count += 1
                        return count
                    }
                    reply = count == 1 ? #"{"disposition": "allow"}"# : later
                    if count > 1, delay > 0 { Thread.sleep(forTimeInterval: delay) }
                }
                try responder.respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(reply.utf8))
            }
        }

        var url: String { origin.url("/hook") }
    }

    static let body = Array("a body from the cache".utf8)
    static let largeBody = TestOrigin.pattern(count: 300_000, seed: 21)

    private func origin() throws -> TestOrigin {
        try TestOrigin(TestOrigin.routes([
            "/fresh": { request, responder in
                try responder.serveResource(Self.body, for: request, extraHeaders: [("Cache-Control", "max-age=600")])
            },
            "/large": { request, responder in
                try responder.serveResource(Self.largeBody, for: request, extraHeaders: [("Cache-Control", "max-age=600")])
            },
            "/validated": { request, responder in
                try responder.serveResource(Self.body, for: request, etag: "\"v1\"", extraHeaders: [("Cache-Control", "no-cache")])
            },
        ]))
    }

    private func session(_ ferry: EngineHarness, receiver: Receiver) async throws -> SessionRecord {
        let events: Set<EventType> = [.dataTaskDidReceiveResponse, .dataTaskDidReceiveData, .taskDidCompleteWithError]
        return try await ferry.database.database.sessions.create(
            tenantID: ferry.tenant.id,
            SessionCreation(configuration: SessionConfiguration(kind: .default), delegate: DelegateSpec(url: receiver.url, events: events))
        ).session
    }

    /// The second of two data tasks of `path`: the first fills the cache.
    private func secondTask(_ ferry: EngineHarness, _ session: SessionRecord, _ url: String) async throws -> TaskRecord {
        let first = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: url).id)
        #expect(first.error == nil)
        // The first task's response is stored before its end is written; give the store a moment.
        try await Task.sleep(for: .milliseconds(200))
        return try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: url).id)
    }

    private func decidedBy(_ ferry: EngineHarness, task: String) async throws -> String? {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let decidedBy = try await ferry.database.database.pool.withConnection { connection in
                try connection.query(
                    "SELECT \(EventRecord.decidedBySQL) FROM events e WHERE e.task_id = $1 AND e.type = $2", [task, EventType.dataTaskDidReceiveResponse.rawValue]
                ).first?.decode(0, as: String?.self) ?? nil
            }
            if decidedBy != nil || ContinuousClock.now >= deadline { return decidedBy }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("fresh or confirmed by a 304: didReceiveResponse (the receiver's decision), then the body as data events", arguments: ["/fresh", "/validated"])
    func responseAndData(path: String) async throws {
        let origin = try origin()
        let receiver = try Receiver(later: #"{"disposition": "allow"}"#)
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: EngineDecisionTests.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let task = try await secondTask(ferry, session, origin.url(path))
            #expect(task.error == nil)
            #expect(origin.requests(path: path).count == (path == "/fresh" ? 1 : 2))
            let types = try await ferry.eventTypes(of: task.id)
            #expect(types == [
                "task.didCreateTask", "dataTask.didReceiveResponse", "dataTask.didReceiveData",
                "task.didFinishCollectingMetrics", "task.didCompleteWithError",
            ])
            #expect(try await decidedBy(ferry, task: task.id) == "receiver")
            let response = try await ferry.eventData(of: task.id, type: "dataTask.didReceiveResponse")
            #expect(response.first?["response"]?["statusCode"] == 200)
            let data = try await ferry.eventData(of: task.id, type: "dataTask.didReceiveData")
            #expect(data.first?["data"]?.stringValue == Data(Self.body).base64EncodedString())
            #expect(data.first?["offset"] == 0)
            #expect(try await ferry.responseBody(of: task.id) == Self.body)
        }
    }

    @Test("the delegate cancels a cached response: the task fails with -999")
    func cancel() async throws {
        let origin = try origin()
        let receiver = try Receiver(later: #"{"disposition": "cancel"}"#)
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: EngineDecisionTests.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let task = try await secondTask(ferry, session, origin.url("/fresh"))
            #expect(task.error?.code == URLErrorCode.cancelled.rawValue)
            #expect(!(try await ferry.eventTypes(of: task.id)).contains("dataTask.didReceiveData"))
        }
    }

    @Test("the delegate makes a cached response a download: the file holds the body")
    func becomeDownload() async throws {
        let origin = try origin()
        let receiver = try Receiver(later: #"{"disposition": "becomeDownload"}"#)
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: EngineDecisionTests.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let task = try await secondTask(ferry, session, origin.url("/fresh"))
            #expect(task.error == nil)
            #expect(task.kind == .download)
            #expect(try ferry.downloadedFile(of: task.id) == Self.body)
            let types = try await ferry.eventTypes(of: task.id)
            #expect(types.starts(with: ["task.didCreateTask", "dataTask.didReceiveResponse", "dataTask.didBecomeDownloadTask", "downloadTask.didWriteData", "downloadTask.didFinishDownloadingTo"]))
        }
    }

    @Test("while its decision waits, a cached body counts in the memory budget, as one from the network does")
    func cachedBodyInMemoryBudget() async throws {
        let origin = try origin()
        let receiver = try Receiver(later: #"{"disposition": "allow"}"#, taking: 1.5)
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: EngineDecisionTests.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let first = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/large")).id)
            #expect(first.error == nil)
            try await Task.sleep(for: .milliseconds(200))
            let second = try await ferry.startTask(in: session, kind: .data, url: origin.url("/large"))
            var most = 0
            for _ in 0..<50 {
                most = max(most, ferry.engine.memory.usedBytes)
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(most >= Self.largeBody.count, "the most the budget held while the decision waited: \(most) bytes")
            let done = try await ferry.completion(of: second.id)
            #expect(done.error == nil)
            #expect(try await ferry.responseBody(of: second.id) == Self.largeBody)
            #expect(origin.requests(path: "/large").count == 1, "the second task's body came from the cache")
            #expect(ferry.engine.memory.usedBytes == 0, "given back once the end was queued")
        }
    }

    @Test("a cached body that does not fit in the memory budget fails its task with -1103, as one from the network does")
    func cachedBodyOverMemoryBudget() async throws {
        let origin = try origin()
        let receiver = try Receiver(later: #"{"disposition": "allow"}"#, taking: 1.5)
        defer { origin.stop(); receiver.origin.stop() }
        // Data tasks' bodies get three quarters of the budget (750,000 bytes), one tenant at most
        // half of that: room for one body.
        try await EngineHarness.run(webhooks: EngineDecisionTests.webhooks, configure: { $0.memoryBudgetBytes = 1_000_000 }) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let first = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/large")).id)
            #expect(first.error == nil)
            try await Task.sleep(for: .milliseconds(200))
            // Both from the cache: while one's decision holds its body, the other's does not fit.
            let started = [
                try await ferry.startTask(in: session, kind: .data, url: origin.url("/large")),
                try await ferry.startTask(in: session, kind: .data, url: origin.url("/large")),
            ]
            var ended: [TaskRecord] = []
            for task in started { ended.append(try await ferry.completion(of: task.id)) }
            #expect(ended.filter { $0.error == nil }.count == 1)
            let failed = try #require(ended.first { $0.error != nil })
            #expect(failed.error?.code == URLErrorCode.dataLengthExceedsMaximum.rawValue)
            #expect(failed.error?.reason?.contains("memory for data-task bodies") == true)
            #expect(origin.requests(path: "/large").count == 1)
        }
    }
}
