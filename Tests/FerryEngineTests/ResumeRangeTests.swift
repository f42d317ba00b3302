import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing
import TestOrigin

/// A resumed download whose 206 does not carry what it says, or not all that was asked for,
/// never ends as a complete file that differs from the origin's.
///
/// Each test starts a download from a checkpoint: the resource's first 40 000 bytes on disk,
/// continued with `Range: bytes=40000-`. The origin answers that range wrongly, and anything
/// without `Range` with the whole resource.
@Suite("Resuming a download: a 206 is checked against its Content-Range")
struct ResumeRangeTests {
    static let body = TestOrigin.pattern(count: 100_000, seed: 23)
    static let etag = "\"range-v1\""
    static let onDisk = 40_000
    /// Bytes that are not the resource's, spliced in by a misbehaving origin.
    static let junk = TestOrigin.pattern(count: 50_000, seed: 99)

    /// What the origin answers `Range: bytes=40000-` with.
    enum Answer: String, CustomTestStringConvertible, Sendable {
        /// `bytes 40000-49999/100000` with `Content-Length: 60000`: the range, then other bytes.
        case lengthPastRange
        /// `bytes 40000-49999/100000`, chunked: the range, then other bytes.
        case chunkedPastRange
        /// `bytes 40000-49999/100000`, exactly that range: less than asked for.
        case rangeShortOfTotal
        /// `bytes 40000-99999/100000`, chunked, ended after 10 000 bytes.
        case chunkedShortOfRange
        /// `bytes 40000-49999/*`, exactly that range: less than asked, of an unknown total.
        case rangeOfUnknownTotal
        /// `bytes 40000-149999/*`, chunked: a range past the total the partial file knows.
        case rangePastKnownTotal
        /// `bytes 40000-99999/100000` without ETag or Last-Modified (a 206 need not repeat the
        /// latter), chunked, ended after 10 000 bytes.
        case chunkedShortOfRangeWithoutValidators

        var testDescription: String { rawValue }

        /// A chunked 206 of these chunks.
        static func chunked(_ responder: OriginResponder, headers: [(String, String)], contentRange: String, _ chunks: [[UInt8]]) throws {
            try responder.writeHead(status: 206, headers: headers + [("Content-Range", contentRange), ("Transfer-Encoding", "chunked")])
            for chunk in chunks { try responder.writeChunk(chunk) }
            try responder.endChunks()
        }

        func respond(_ responder: OriginResponder) throws {
            let first = ResumeRangeTests.onDisk
            let range = Array(ResumeRangeTests.body[first..<first + 10_000])
            let common = [("ETag", ResumeRangeTests.etag), ("Accept-Ranges", "bytes")]
            switch self {
            case .lengthPastRange:
                try responder.respond(
                    status: 206, headers: common + [("Content-Range", "bytes 40000-49999/100000"), ("Content-Length", "60000")],
                    body: range + ResumeRangeTests.junk
                )
            case .chunkedPastRange:
                try Self.chunked(responder, headers: common, contentRange: "bytes 40000-49999/100000", [range, ResumeRangeTests.junk])
            case .rangeShortOfTotal:
                try responder.respond(status: 206, headers: common + [("Content-Range", "bytes 40000-49999/100000")], body: range)
            case .chunkedShortOfRange:
                try Self.chunked(responder, headers: common, contentRange: "bytes 40000-99999/100000", [range])
            case .rangeOfUnknownTotal:
                try responder.respond(status: 206, headers: common + [("Content-Range", "bytes 40000-49999/*")], body: range)
            case .rangePastKnownTotal:
                try Self.chunked(responder, headers: common, contentRange: "bytes 40000-149999/*", [Array(ResumeRangeTests.body[first...]), ResumeRangeTests.junk])
            case .chunkedShortOfRangeWithoutValidators:
                try Self.chunked(responder, headers: [("Accept-Ranges", "bytes")], contentRange: "bytes 40000-99999/100000", [range])
            }
        }
    }

    /// An origin that answers the first ranged request with `answer`, and everything else
    /// correctly (a later range included).
    static func origin(answering answer: Answer) throws -> TestOrigin {
        let answered = Mutex(false)
        return try TestOrigin { request, responder in
            let misbehaves = request.header("Range") != nil && answered.withLock { done in
                defer { done = true }
                return !done
            }
            if misbehaves { return try answer.respond(responder) }
            try responder.serveResource(Self.body, for: request, etag: Self.etag)
        }
    }

    /// Puts the resource's first `onDisk` bytes in a partial file and starts a download that
    /// continues it.
    static func startResumed(
        _ ferry: EngineHarness, url: String, expectedTotalBytes: Int64?, headers: [String: String] = [:]
    ) async throws -> TaskRecord {
        let session = try await ferry.makeSession()
        let files = TenantFiles(dataDirectory: ferry.dataDirectory)
        try files.createDirectories(tenantID: ferry.tenant.id)
        let name = "resumed-range.part"
        try Data(body.prefix(onDisk)).write(to: URL(fileURLWithPath: try files.path(.partial, tenantID: ferry.tenant.id, name: name)))
        let checkpoint = TransferCheckpoint(
            partialFile: name, bytesOnDisk: Int64(onDisk), validator: .strongETag(etag), url: url, expectedTotalBytes: expectedTotalBytes
        )
        return try await ferry.startTask(in: session, kind: .download, url: url, headers: headers, checkpoint: checkpoint)
    }

    @Test("a resumed request sends Ferry's Range and If-Range only, not the request's own beside them")
    func ownRangeHeadersGiveWay() async throws {
        let origin = try TestOrigin { request, responder in try responder.serveResource(Self.body, for: request, etag: Self.etag) }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let started = try await Self.startResumed(
                ferry, url: origin.url("/file"), expectedTotalBytes: 100_000, headers: ["range": "bytes=0-", "If-Range": "W/\"weak\""]
            )
            let task = try await ferry.completion(of: started.id)
            #expect(task.error == nil)
            #expect(try ferry.downloadedFile(of: task.id) == Self.body)
            let sent = try #require(origin.requests(path: "/file").first)
            #expect(sent.headerValues("Range") == ["bytes=40000-"])
            #expect(sent.headerValues("If-Range") == [Self.etag])
        }
    }

    @Test("a download whose request names its own Range is not resumable: what it holds is a slice, not the file's start")
    func ownRangeIsNotResumable() async throws {
        // The slice 100-199, cut after 50 bytes.
        let origin = try TestOrigin { _, responder in
            try responder.respond(
                status: 206, headers: [("ETag", Self.etag), ("Content-Range", "bytes 100-199/100000")],
                body: Array(Self.body[100...199]), faults: BodyFaults(resetAfter: 50)
            )
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let started = try await ferry.startTask(in: session, kind: .download, url: origin.url("/file"), headers: ["Range": "bytes=100-199"])
            let task = try await ferry.completion(of: started.id)
            #expect(task.error?.code == URLErrorCode.networkConnectionLost.rawValue)
            // Resumed from 50 bytes, it would have asked for bytes=50- and spliced the file's
            // bytes 50-… onto its slice 100-149.
            #expect(task.error?.resumeData == nil)
        }
    }

    /// Resumes a download from `onDisk` bytes of `origin`'s `/file` (stopped afterwards) and
    /// runs `check` on its end.
    static func resumeToEnd(
        from origin: TestOrigin, expectedTotalBytes: Int64? = 100_000, _ check: (EngineHarness, TaskRecord) async throws -> Void
    ) async throws {
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let started = try await startResumed(ferry, url: origin.url("/file"), expectedTotalBytes: expectedTotalBytes)
            try await check(ferry, try await ferry.completion(of: started.id))
        }
    }

    /// An origin that answers every range with 10 000 bytes at most (the rest of the resource
    /// takes more requests), and ranges from `refused` on with a 503.
    static func cappingOrigin(refusingFrom refused: Int = .max) throws -> TestOrigin {
        try TestOrigin { request, responder in
            guard let range = request.header("Range"), let first = Int(range.dropFirst("bytes=".count).dropLast()) else {
                return try responder.serveResource(Self.body, for: request, etag: Self.etag)
            }
            guard first < refused else { return try responder.respond(status: 503, headers: [], body: Array("busy".utf8)) }
            let last = min(first + 9_999, Self.body.count - 1)
            try responder.respond(
                status: 206, headers: [("ETag", Self.etag), ("Content-Range", "bytes \(first)-\(last)/\(Self.body.count)")],
                body: Array(Self.body[first...last])
            )
        }
    }

    /// The resume data a task failed with, decoded.
    static func resumeToken(of task: TaskRecord, _ ferry: EngineHarness) throws -> ResumeDataToken {
        try ferry.resumeData.decode(try #require(task.error?.resumeData), tenantID: ferry.tenant.id)
    }

    @Test(
        "a 206 whose body runs past its Content-Range is not appended: the download starts over without Range",
        arguments: [Answer.lengthPastRange, .chunkedPastRange, .rangePastKnownTotal]
    )
    func bodyPastRange(_ answer: Answer) async throws {
        let origin = try Self.origin(answering: answer)
        try await Self.resumeToEnd(from: origin) { ferry, task async throws in
            #expect(task.error == nil, "\(String(describing: task.error))")
            #expect(try ferry.downloadedFile(of: task.id) == Self.body)
            #expect(origin.requests.map { $0.header("Range") } == ["bytes=40000-", nil])
            // Refused mid-body (the chunked one: the others are refused by their heads), after
            // the delegate heard of offset 40000, the download tells it that it starts over;
            // its progress never steps back.
            let offsets = try await ferry.eventData(of: task.id, type: "downloadTask.didResumeAtOffset").map { $0["fileOffset"] }
            #expect(offsets == (answer == .chunkedPastRange ? [.number(40_000), .number(0)] : []), "\(offsets)")
            let steps = try await ferry.eventData(of: task.id, type: "downloadTask.didWriteData").map { $0["bytesWritten"] }
            #expect(steps.allSatisfy { if case .number(let step)? = $0 { step >= 0 } else { false } }, "\(steps)")
        }
    }

    @Test(
        "a 206 whose range ends before the known total is continued: the rest is asked for in the same transfer",
        arguments: [Answer.rangeShortOfTotal, .rangeOfUnknownTotal]
    )
    func shortOfTotal(_ answer: Answer) async throws {
        let origin = try Self.origin(answering: answer)
        try await Self.resumeToEnd(from: origin) { ferry, task async throws in
            #expect(task.error == nil, "\(String(describing: task.error))")
            #expect(try ferry.downloadedFile(of: task.id) == Self.body)
            #expect(origin.requests.map { $0.header("Range") } == ["bytes=40000-", "bytes=50000-"])
            #expect(origin.requests.map { $0.header("If-Range") } == [Self.etag, Self.etag])
            let offsets = try await ferry.eventData(of: task.id, type: "downloadTask.didResumeAtOffset").map { $0["fileOffset"] }
            #expect(offsets == [.number(40_000)], "one download, resumed once: \(offsets)")
        }
    }

    @Test("an origin that caps every range at 10 000 bytes completes a resumed download in one transfer")
    func cappedRanges() async throws {
        let origin = try Self.cappingOrigin()
        try await Self.resumeToEnd(from: origin) { ferry, task async throws in
            #expect(task.error == nil, "\(String(describing: task.error))")
            #expect(try ferry.downloadedFile(of: task.id) == Self.body)
            #expect(origin.requests.map { $0.header("Range") } == stride(from: 40_000, to: 100_000, by: 10_000).map { "bytes=\($0)-" })
        }
    }

    @Test("a request for the rest answered 503 ends the download -1005 with what every range brought, not the error page")
    func refusedContinuation() async throws {
        let origin = try Self.cappingOrigin(refusingFrom: 60_000)
        try await Self.resumeToEnd(from: origin) { ferry, task async throws in
            #expect(task.error?.code == -1005, "\(String(describing: task.error))")
            #expect(!task.hasDownloadedFile)
            let token = try Self.resumeToken(of: task, ferry)
            #expect(token.bytesOnDisk == 60_000)
            #expect(token.validator == .strongETag(Self.etag))
            #expect(origin.requests.map { $0.header("Range") } == ["bytes=40000-", "bytes=50000-", "bytes=60000-"])
        }
    }

    @Test(
        "a 206 whose body ends before its range is -1005 with resume data for what came, which then completes the file",
        arguments: [Answer.chunkedShortOfRange, .chunkedShortOfRangeWithoutValidators]
    )
    func shortOfRange(_ answer: Answer) async throws {
        let origin = try Self.origin(answering: answer)
        try await Self.resumeToEnd(from: origin) { ferry, task async throws in
            #expect(task.error?.code == -1005, "\(String(describing: task.error))")
            #expect(!task.hasDownloadedFile)
            let token = try Self.resumeToken(of: task, ferry)
            #expect(token.bytesOnDisk == 50_000)
            #expect(token.validator == .strongETag(Self.etag))
            #expect(token.expectedTotalBytes == 100_000)

            // The resume data continues where the short 206 ended, to the origin's file.
            let checkpoint = TransferCheckpoint(
                partialFile: token.partialFile, bytesOnDisk: token.bytesOnDisk, validator: token.validator,
                url: token.url, expectedTotalBytes: token.expectedTotalBytes
            )
            let session = try await ferry.makeSession()
            let resumed = try await ferry.completion(of: try await ferry.startTask(
                in: session, kind: .download, url: origin.url("/file"), checkpoint: checkpoint, adoptsPartialFileOf: task.id
            ).id)
            #expect(resumed.error == nil, "\(String(describing: resumed.error))")
            #expect(try ferry.downloadedFile(of: resumed.id) == Self.body)
            #expect(origin.requests.map { $0.header("Range") } == ["bytes=40000-", "bytes=50000-"])
        }
    }

    @Test("a 206 of an unknown total, resuming a file of an unknown total, is not trusted to end it: the download starts over")
    func unknownTotal() async throws {
        let origin = try Self.origin(answering: .rangeOfUnknownTotal)
        try await Self.resumeToEnd(from: origin, expectedTotalBytes: nil) { ferry, task async throws in
            #expect(task.error == nil, "\(String(describing: task.error))")
            #expect(try ferry.downloadedFile(of: task.id) == Self.body)
            #expect(origin.requests.map { $0.header("Range") } == ["bytes=40000-", nil])
        }
    }
}
