import FerryCore
import HTTPTypes
import Testing
import TestOrigin

@Suite("A task's content: /data for data tasks, /file with ranges for downloads, DELETE /file", .sharedHarnesses)
struct TaskContentTests {
    /// A `Range` header and what a download of 1000 bytes answers to it.
    struct RangeCase: Sendable {
        var range: String
        /// nil: the whole file with 200; otherwise the bytes served with 206.
        var served: ClosedRange<Int>?
        var isUnsatisfiable = false
    }

    static let ranges: [RangeCase] = [
        RangeCase(range: "bytes=0-99", served: 0...99),
        RangeCase(range: "bytes=0-0", served: 0...0),
        RangeCase(range: "bytes=900-", served: 900...999),
        RangeCase(range: "bytes=990-2000", served: 990...999),
        RangeCase(range: "bytes=-100", served: 900...999),
        RangeCase(range: "bytes=-5000", served: 0...999),
        RangeCase(range: "bytes=1000-", served: nil, isUnsatisfiable: true),
        RangeCase(range: "bytes=5000-6000", served: nil, isUnsatisfiable: true),
        RangeCase(range: "bytes=-0", served: nil, isUnsatisfiable: true),
        RangeCase(range: "bytes=0-99,200-299", served: nil),
        RangeCase(range: "bytes=50-10", served: nil),
        RangeCase(range: "items=0-5", served: nil),
        RangeCase(range: "bytes=abc", served: nil),
    ]

    @Test("a download's file is served whole and in ranges; deleted, it is gone")
    func downloadFile() async throws {
        let body = TestOrigin.pattern(count: 1000, seed: 5)
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(body, for: request, etag: "\"f1\"", contentType: "application/x-test")
        }
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": .string(origin.url("/f.bin"))], "resume": true])
            #expect(try await tenant.task(task.id, wait: 20).state == "completed")

            let whole = try await tenant.file(task.id)
            #expect(whole.status == .ok)
            #expect(whole.body == body)
            #expect(whole.headers[.contentLength] == "1000")
            #expect(whole.headers[.acceptRanges] == "bytes")
            #expect(whole.contentType == "application/x-test")

            for row in Self.ranges {
                let reply = try await tenant.file(task.id, range: row.range)
                if let served = row.served {
                    #expect(reply.status == .partialContent, "\(row.range): \(reply)")
                    #expect(reply.body == Array(body[served]), "\(row.range)")
                    #expect(reply.headers[.contentRange] == "bytes \(served.lowerBound)-\(served.upperBound)/1000", "\(row.range)")
                } else if row.isUnsatisfiable {
                    expectProblem(reply, status: .rangeNotSatisfiable)
                    #expect(reply.headers[.contentRange] == "bytes */1000", "\(row.range)")
                } else {
                    #expect(reply.status == .ok, "\(row.range): \(reply)")
                    #expect(reply.body == body, "\(row.range)")
                }
            }

            let metrics = try await tenant.send(.get, "/v1/tasks/\(task.id)/metrics")
            #expect(metrics.status == .ok)
            expectProblem(try await tenant.send(.get, "/v1/tasks/\(task.id)/data"), status: .conflict)

            #expect(try await tenant.deleteFile(task.id).status == .noContent)
            expectProblem(try await tenant.file(task.id), status: .notFound)
            expectProblem(try await tenant.file(task.id, range: "bytes=0-9"), status: .notFound)
            expectProblem(try await tenant.deleteFile(task.id), status: .notFound)
        }
    }

    @Test("a data task's body is its /data, with the origin's media type; it has no /file")
    func dataTaskBody() async throws {
        let origin = try TestOrigin { _, responder in
            try responder.respond(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array("hello, ferry".utf8))
        }
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let pending = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": .string(origin.url("/hello"))]])
            expectProblem(try await tenant.send(.get, "/v1/tasks/\(pending.id)/data"), status: .conflict)
            expectProblem(try await tenant.send(.get, "/v1/tasks/\(pending.id)/metrics"), status: .conflict)

            _ = try await tenant.command(.resume, pending.id)
            #expect(try await tenant.task(pending.id, wait: 20).state == "completed")

            let reply = try await tenant.send(.get, "/v1/tasks/\(pending.id)/data")
            #expect(reply.status == .ok)
            #expect(reply.text == "hello, ferry")
            #expect(reply.contentType == "text/plain; charset=utf-8")
            #expect(try await tenant.data(pending.id) == Array("hello, ferry".utf8))
            expectProblem(try await tenant.file(pending.id), status: .conflict)
            expectProblem(try await tenant.deleteFile(pending.id), status: .notFound)
        }
    }

    @Test("a download that has not completed has no file yet")
    func noFileBeforeCompletion() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"]])

            expectProblem(try await tenant.file(task.id), status: .notFound)
            expectProblem(try await tenant.file(task.id, range: "bytes=0-1"), status: .notFound)
        }
    }
}
