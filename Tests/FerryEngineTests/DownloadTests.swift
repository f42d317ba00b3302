import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Downloads, data and upload tasks over real curl transfers")
struct DownloadTests {
    @Test("a download lands byte-exact, with URLSession's events in order")
    func download() async throws {
        let body = TestOrigin.pattern(count: 3 * 1024 * 1024 + 17)
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(body, for: request, etag: "\"v1\"", contentType: "application/x-test")
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()

            let created = try await ferry.startTask(in: session, kind: .download, url: origin.url("/files/big.bin"))
            let task = try await ferry.completion(of: created.id)

            #expect(task.state == .completed)
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200)
            #expect(task.response?.mimeType == "application/x-test")
            #expect(task.response?.suggestedFilename == "big.bin")
            #expect(task.countOfBytesReceived == Int64(body.count))
            #expect(task.countOfBytesExpectedToReceive == Int64(body.count))
            #expect(task.hasDownloadedFile)
            #expect(try ferry.downloadedFile(of: task.id) == body)
            let events = try await ferry.eventTypes(of: task.id)
            #expect(events.first == "task.didCreateTask")
            // A download over loopback ends before the first heartbeat; its bytes are still reported.
            #expect(Array(events.suffix(4)) == [
                "downloadTask.didWriteData",
                "downloadTask.didFinishDownloadingTo", "task.didFinishCollectingMetrics", "task.didCompleteWithError",
            ])
            let writes = try await ferry.eventData(of: task.id, type: "downloadTask.didWriteData")
            #expect(writes.last?["totalBytesWritten"] == .number(Double(body.count)))
            #expect(writes.last?["totalBytesExpectedToWrite"] == .number(Double(body.count)))
            let written = writes.reduce(0.0) { total, write in
                guard case .number(let bytes)? = write["bytesWritten"] else { return total }
                return total + bytes
            }
            #expect(written == Double(body.count), "the bytesWritten of every didWriteData add up to the file")
            let metrics = try #require(try await ferry.tasks.metrics(tenantID: ferry.tenant.id, taskID: task.id))
            #expect(metrics["redirectCount"] == 0)
            guard case .array(let transactions)? = metrics["transactionMetrics"] else {
                Issue.record("no transaction metrics")
                return
            }
            #expect(transactions.count == 1)
            #expect(transactions.first?["remoteAddress"] == "127.0.0.1")
        }
    }

    @Test("a session's own Accept-Encoding is sent as given; otherwise curl offers its codings")
    func acceptEncoding() async throws {
        let origin = try TestOrigin { _, responder in
            try responder.respond(status: 200, headers: [("Content-Type", "text/plain")], body: Array("ok".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            var configuration = SessionConfiguration(kind: .default)
            configuration.httpAdditionalHeaders = ["Accept-Encoding": "identity"]
            let own = try await ferry.makeSession(configuration)
            let plain = try await ferry.makeSession()
            _ = try await ferry.completion(of: try await ferry.startTask(in: own, kind: .data, url: origin.url("/own")).id)
            _ = try await ferry.completion(of: try await ferry.startTask(in: plain, kind: .data, url: origin.url("/plain")).id)
            let sent = Dictionary(origin.requests.map { ($0.path, $0.header("Accept-Encoding")) }, uniquingKeysWith: { first, _ in first })
            #expect(sent["/own"] == "identity")
            #expect(sent["/plain"]??.contains("gzip") == true, "curl's list: \(String(describing: sent["/plain"]))")
        }
    }

    @Test("an HTTP error status is a response, not an error; the data task keeps the body")
    func dataTask() async throws {
        let origin = try TestOrigin { _, responder in
            try responder.respond(status: 404, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array("no such thing".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()

            let created = try await ferry.startTask(in: session, kind: .data, url: origin.url("/missing"))
            let task = try await ferry.completion(of: created.id)

            #expect(task.error == nil)
            #expect(task.response?.statusCode == 404)
            #expect(task.response?.textEncodingName == "utf-8")
            #expect(try await ferry.responseBody(of: task.id) == Array("no such thing".utf8))
            #expect(try await ferry.eventTypes(of: task.id).contains("dataTask.didReceiveResponse"))
        }
    }

    @Test("an upload sends its body intact and counts it")
    func upload() async throws {
        let payload = TestOrigin.pattern(count: 300_000, seed: 9)
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 201, body: Array("got \(request.body.count) \(request.method)".utf8))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()

            let created = try await ferry.startTask(in: session, kind: .upload, url: origin.url("/upload"), method: "PUT", uploadBody: payload)
            let task = try await ferry.completion(of: created.id)

            #expect(task.error == nil)
            #expect(task.response?.statusCode == 201)
            #expect(task.countOfBytesSent == Int64(payload.count))
            #expect(task.countOfBytesExpectedToSend == Int64(payload.count))
            #expect(origin.requests(path: "/upload").first?.body == payload)
            #expect(try await ferry.responseBody(of: task.id) == Array("got 300000 PUT".utf8))
        }
    }

    @Test("a data task larger than the bound fails clearly with -1103")
    func dataTooLarge() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(TestOrigin.pattern(count: 200_000), for: request)
        }
        defer { origin.stop() }
        try await EngineHarness.run(configure: { $0.maximumDataBytes = 100_000 }) { ferry in
            let session = try await ferry.makeSession()

            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/big")).id)
            #expect(task.error?.code == -1103)
            #expect(task.error?.reason?.contains("download task") == true)
        }
    }
}
