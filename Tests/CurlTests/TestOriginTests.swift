import FerryTestSupport
import Foundation
import Testing
import TestOrigin

/// The test origin, checked with the real `curl` command line tool so these tests do not
/// depend on the `Curl` module they exist to test. Serialized: several assert on timing.
@Suite(.serialized)
struct TestOriginTests {
    private let data = TestOrigin.pattern(count: 10_000)
    private let lastModified = Date(timeIntervalSince1970: 1_700_000_000)

    private func resourceOrigin(etag: String = "\"v1\"") throws -> TestOrigin {
        let (data, lastModified) = (data, lastModified)
        return try TestOrigin { request, responder in
            try responder.serveResource(data, for: request, etag: etag, lastModified: lastModified)
        }
    }

    @Test func servesWholeResource() throws {
        let origin = try resourceOrigin()
        defer { origin.stop() }
        let run = try runCurl([origin.url("/file?x=1&y=a%20b")])
        #expect(run.exitCode == 0)
        #expect(run.status == 200)
        #expect(mismatch(run.body, data) == nil)
        #expect(run.header("Content-Length") == "10000")
        #expect(run.header("ETag") == "\"v1\"")
        #expect(run.header("Last-Modified") == "Tue, 14 Nov 2023 22:13:20 GMT")
        let request = try #require(origin.requests.first)
        #expect(request.method == "GET")
        #expect(request.path == "/file")
        #expect(request.target == "/file?x=1&y=a%20b")
        #expect(request.query == ["x": "1", "y": "a b"])
        #expect(request.header("user-agent")?.hasPrefix("curl/") == true)
    }

    @Test func servesByteRanges() throws {
        let origin = try resourceOrigin()
        defer { origin.stop() }
        let cases: [(range: String, first: Int, last: Int)] = [
            ("bytes=100-199", 100, 199), ("bytes=9990-", 9990, 9999), ("bytes=-10", 9990, 9999),
            ("bytes=9000-20000", 9000, 9999), ("bytes=-50000", 0, 9999),
        ]
        for item in cases {
            let run = try runCurl(["-H", "Range: \(item.range)", origin.url("/file")])
            #expect(run.status == 206, "\(item.range)")
            #expect(run.header("Content-Range") == "bytes \(item.first)-\(item.last)/10000", "\(item.range)")
            #expect(mismatch(run.body, data[item.first...item.last]) == nil, "\(item.range)")
        }
        let ignored = try runCurl(["-H", "Range: bytes=5-1", origin.url("/file")])
        #expect(ignored.status == 200)
        #expect(mismatch(ignored.body, data) == nil)
    }

    @Test func ifRangeDecidesBetweenPartialAndWhole() throws {
        let strong = try resourceOrigin(etag: "\"v2\"")
        defer { strong.stop() }
        func status(_ origin: TestOrigin, ifRange: String) throws -> (Int?, Int) {
            let run = try runCurl(["-H", "Range: bytes=100-", "-H", "If-Range: \(ifRange)", origin.url("/file")])
            return (run.status, run.body.count)
        }
        #expect(try status(strong, ifRange: "\"v2\"") == (206, 9900))
        #expect(try status(strong, ifRange: "\"v1\"") == (200, 10_000))
        #expect(try status(strong, ifRange: "W/\"v2\"") == (200, 10_000))
        #expect(try status(strong, ifRange: "Tue, 14 Nov 2023 22:13:20 GMT") == (206, 9900))
        #expect(try status(strong, ifRange: "Tue, 14 Nov 2023 22:13:21 GMT") == (200, 10_000))

        let weak = try resourceOrigin(etag: "W/\"v2\"")
        defer { weak.stop() }
        #expect(try status(weak, ifRange: "W/\"v2\"") == (200, 10_000))
        #expect(try status(weak, ifRange: "\"v2\"") == (200, 10_000))
    }

    @Test func unsatisfiableRangeAnswers416() throws {
        let origin = try resourceOrigin()
        defer { origin.stop() }
        let run = try runCurl(["-H", "Range: bytes=10000-", origin.url("/file")])
        #expect(run.status == 416)
        #expect(run.header("Content-Range") == "bytes */10000")
        #expect(run.body.isEmpty)
    }

    @Test func conditionalRequestsAnswer304() throws {
        let origin = try resourceOrigin()
        defer { origin.stop() }
        let byTag = try runCurl(["-H", "If-None-Match: \"v0\", W/\"v1\"", origin.url("/file")])
        #expect(byTag.status == 304)
        #expect(byTag.body.isEmpty)
        #expect(byTag.header("ETag") == "\"v1\"")
        let byDate = try runCurl(["-H", "If-Modified-Since: Tue, 14 Nov 2023 22:13:20 GMT", origin.url("/file")])
        #expect(byDate.status == 304)
        let changed = try runCurl(["-H", "If-Modified-Since: Tue, 14 Nov 2023 22:13:19 GMT", origin.url("/file")])
        #expect(changed.status == 200)
        #expect(mismatch(changed.body, data) == nil)
        let otherTag = try runCurl(["-H", "If-None-Match: \"v0\"", origin.url("/file")])
        #expect(otherTag.status == 200)
    }

    @Test func headSendsHeadersOnlyAndKeepsTheConnection() throws {
        let origin = try resourceOrigin()
        defer { origin.stop() }
        let run = try runCurl(["-I", origin.url("/file"), origin.url("/file")])
        #expect(run.exitCode == 0)
        #expect(run.status == 200)
        #expect(run.header("Content-Length") == "10000")
        // With -I curl writes the head to the output file: nothing may follow the blank line.
        let outputs = run.bodies.map { String(decoding: $0, as: UTF8.self) }
        #expect(outputs.count == 2 && outputs.allSatisfy { $0.hasPrefix("HTTP/1.1 200") && $0.hasSuffix("\r\n\r\n") })
        #expect(origin.requests.map(\.method) == ["HEAD", "HEAD"])
        #expect(origin.connectionsAccepted == 1)
    }

    @Test func reusesKeepAliveConnections() throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/a": { request, responder in try responder.serveResource(Array("first".utf8), for: request) },
            "/b": { _, responder in
                try responder.writeHead(status: 200, headers: [("Transfer-Encoding", "chunked")])
                try responder.writeChunk(Array("sec".utf8))
                try responder.writeChunk(Array("ond".utf8))
                try responder.endChunks()
            },
        ]))
        defer { origin.stop() }
        let run = try runCurl([origin.url("/a"), origin.url("/b"), origin.url("/a"), origin.url("/missing")])
        #expect(run.bodies.map { String(decoding: $0, as: UTF8.self) } == ["first", "second", "first", "no route for /missing\n"])
        #expect(run.status == 404)
        #expect(origin.connectionsAccepted == 1)
        #expect(origin.requests.map(\.connectionIndex) == [0, 0, 0, 0])
    }

    /// Megabytes, so the RST is sent while data is still in flight: the origin must wait for
    /// the client to acknowledge it, or the client sees fewer bytes than asked for.
    @Test func resetAfterAbortsWithExactlyThatManyBytes() throws {
        let big = TestOrigin.pattern(count: 4_000_000, seed: 1)
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(big, for: request, resetAfter: 3_000_000)
        }
        defer { origin.stop() }
        let run = try runCurl([origin.url("/file")])
        #expect(run.exitCode == 56 || run.exitCode == 18, "\(run.stderr)")
        #expect(run.body.count == 3_000_000)
        #expect(mismatch(run.body, big[0..<3_000_000]) == nil)
    }

    @Test func closeAfterEndsTheBodyEarly() throws {
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(TestOrigin.pattern(count: 50_000), for: request, closeAfter: 12_345)
        }
        defer { origin.stop() }
        let run = try runCurl([origin.url("/file")])
        #expect(run.exitCode == 18, "\(run.stderr)")
        #expect(mismatch(run.body, TestOrigin.pattern(count: 12_345)) == nil)
    }

    @Test func stallAndThrottleAreObservable() throws {
        let data = self.data
        let origin = try TestOrigin(TestOrigin.routes([
            "/stall": { request, responder in
                try responder.serveResource(data, for: request, stallAfter: (bytes: 1000, seconds: 0.6))
            },
            "/slow": { request, responder in
                try responder.serveResource(data, for: request, bytesPerSecond: 25_000)
            },
        ]))
        defer { origin.stop() }
        let stalled = try runCurl([origin.url("/stall")])
        #expect(stalled.exitCode == 0)
        #expect(mismatch(stalled.body, data) == nil)
        #expect(stalled.elapsed >= 0.6 && stalled.elapsed < 3)
        let timeout = try runCurl(["--max-time", "0.3", origin.url("/stall")])
        #expect(timeout.exitCode == 28)
        #expect(mismatch(timeout.body, data[0..<1000]) == nil)
        let slow = try runCurl([origin.url("/slow")])
        #expect(mismatch(slow.body, data) == nil)
        #expect(slow.elapsed >= 0.35 && slow.elapsed < 3)
    }

    @Test func redirects() throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/old": { _, responder in try responder.redirect(to: "/new", status: 301) },
            "/new": { request, responder in try responder.serveResource(Array("moved here".utf8), for: request) },
        ]))
        defer { origin.stop() }
        let unfollowed = try runCurl([origin.url("/old")])
        #expect(unfollowed.status == 301)
        #expect(unfollowed.header("Location") == "/new")
        let followed = try runCurl(["-L", origin.url("/old")])
        #expect(followed.status == 200)
        #expect(followed.body == Array("moved here".utf8))
        #expect(origin.requests.map(\.path) == ["/old", "/old", "/new"])
    }

    @Test func basicAndDigestAuthentication() throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/basic": { _, responder in
                guard try responder.requireBasicAuth(user: "ann", password: "s3cret", realm: "files") else { return }
                try responder.respond(status: 200, body: Array("basic ok".utf8))
            },
            "/digest": { _, responder in
                guard try responder.requireDigestAuth(user: "ann", password: "s3cret", realm: "files") else { return }
                try responder.respond(status: 200, body: Array("digest ok".utf8))
            },
        ]))
        defer { origin.stop() }
        let basic = try runCurl(["--basic", "-u", "ann:s3cret", origin.url("/basic")])
        #expect(basic.status == 200)
        #expect(basic.body == Array("basic ok".utf8))
        let badBasic = try runCurl(["--basic", "-u", "ann:wrong", origin.url("/basic")])
        #expect(badBasic.status == 401)
        #expect(badBasic.header("WWW-Authenticate") == "Basic realm=\"files\", charset=\"UTF-8\"")

        let digest = try runCurl(["--digest", "-u", "ann:s3cret", origin.url("/digest?q=1")])
        #expect(digest.status == 200)
        #expect(digest.body == Array("digest ok".utf8))
        let attempts = origin.requests(path: "/digest")
        #expect(attempts.count == 2)
        #expect(attempts.last?.header("Authorization")?.hasPrefix("Digest ") == true)
        let badDigest = try runCurl(["--digest", "-u", "ann:wrong", origin.url("/digest")])
        #expect(badDigest.status == 401)
        #expect(badDigest.header("WWW-Authenticate")?.hasPrefix("Digest realm=\"files\", qop=\"auth\"") == true)
    }

    @Test func receivesChunkedAndExpectContinueUploads() throws {
        let origin = try TestOrigin { request, responder in
            try responder.respond(status: 200, body: Array("\(request.body.count)".utf8))
        }
        defer { origin.stop() }
        let upload = TestOrigin.pattern(count: 300_000, seed: 2)
        let chunked = try runCurl(["-H", "Transfer-Encoding: chunked", "--data-binary", "@-", origin.url("/up")], input: upload)
        #expect(chunked.body == Array("300000".utf8))
        #expect(origin.requests.last?.header("Transfer-Encoding") == "chunked")
        #expect(mismatch(origin.requests.last?.body ?? [], upload) == nil)

        let large = TestOrigin.pattern(count: 2 * 1024 * 1024, seed: 3)
        let expecting = try runCurl(["-H", "Expect: 100-continue", "-T", "-", origin.url("/put")], input: large)
        #expect(expecting.status == 200)
        #expect(expecting.elapsed < 1)
        #expect(origin.requests.last?.header("Expect") == "100-continue")
        #expect(origin.requests.last?.method == "PUT")
        #expect(mismatch(origin.requests.last?.body ?? [], large) == nil)
    }

    @Test func countsConcurrentConnections() throws {
        let origin = try TestOrigin { _, responder in
            responder.pause(seconds: 0.4)
            try responder.respond(status: 200, body: Array("ok".utf8))
        }
        defer { origin.stop() }
        let clients = try (0..<3).map { _ in try CurlProcess([origin.url("/")]) }
        let runs = try clients.map { try $0.finish() }
        #expect(runs.map(\.status) == [200, 200, 200])
        #expect(origin.connectionsAccepted == 3)
        #expect(origin.maxConcurrentConnections == 3)
        #expect(Set(origin.requests.map(\.connectionIndex)) == [0, 1, 2])
    }

    @Test func stopEndsStalledConnectionsPromptly() throws {
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(TestOrigin.pattern(count: 1000), for: request, stallAfter: (bytes: 10, seconds: 30))
        }
        let client = try CurlProcess([origin.url("/")])
        let deadline = Date().addingTimeInterval(5)
        while origin.requests.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(origin.openConnections == 1)
        let started = Date()
        origin.stop()
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(origin.openConnections == 0)
        let run = try client.finish()
        // 18 or 56: cut off mid-body. 52 (empty reply): the stop came after the request was read
        // but before the first bytes went out; the connection still ended at once.
        #expect([18, 52, 56].contains(run.exitCode), "curl exited with \(run.exitCode)")
        #expect(run.elapsed < 5)
    }

    @Test func failingHandlersAnswer500() throws {
        struct Refusal: Error {}
        let origin = try TestOrigin(TestOrigin.routes([
            "/throws": { _, _ in throw Refusal() },
            "/silent": { _, _ in },
        ]))
        defer { origin.stop() }
        #expect(try runCurl([origin.url("/throws")]).status == 500)
        #expect(try runCurl([origin.url("/silent")]).status == 500)
    }

    @Test func listensOnIPv6Loopback() throws {
        let origin = try TestOrigin(ipv6: true) { request, responder in
            try responder.serveResource(Array("v6".utf8), for: request)
        }
        defer { origin.stop() }
        #expect(origin.baseURL == "http://[::1]:\(origin.port)")
        let run = try runCurl(["-g", origin.url("/")])
        #expect(run.body == Array("v6".utf8))
    }

    @Test func patternIsDeterministicAndSeeded() {
        let first = TestOrigin.pattern(count: 4096)
        #expect(first == TestOrigin.pattern(count: 4096))
        #expect(Array(first.prefix(100)) == TestOrigin.pattern(count: 100))
        let other = TestOrigin.pattern(count: 4096, seed: 1)
        #expect(first != other)
        #expect(!(1..<64).contains { Array(first.dropFirst($0).prefix(64)) == Array(other.prefix(64)) })
        #expect(Set(first).count > 200)
    }
}

// MARK: - Running /usr/bin/curl

/// What one curl invocation produced: exit code, every response body, and the headers of
/// the final response.
private struct CurlRun {
    var exitCode: Int32
    var bodies: [[UInt8]]
    var headerDump: String
    var stderr: String
    var elapsed: TimeInterval

    var body: [UInt8] { bodies.first ?? [] }

    /// The header lines of the last response in the dump (after redirects, 401s and 100s).
    private var lastResponse: [Substring] {
        let blocks = headerDump.components(separatedBy: "\r\n\r\n").filter { $0.hasPrefix("HTTP/") }
        return (blocks.last ?? "").split(separator: "\r\n")
    }

    var status: Int? {
        lastResponse.first.flatMap { line in line.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
    }

    func header(_ name: String) -> String? {
        lastResponse.dropFirst().first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
    }
}

/// A curl process running in the background, writing each URL's body to its own file.
private final class CurlProcess {
    private let process = Process()
    private let folder: URL
    private let urlCount: Int
    private let started = Date()

    init(_ arguments: [String], input: [UInt8]? = nil) throws {
        folder = URL(fileURLWithPath: try TestScratch.folder(named: "curl"))
        urlCount = arguments.filter { $0.hasPrefix("http://") }.count
        var options = ["-q", "-s", "-S", "--noproxy", "*", "--max-time", "10",
                       "-D", folder.appendingPathComponent("head").path,
                       "--stderr", folder.appendingPathComponent("stderr").path]
        for index in 0..<urlCount {
            options += ["-o", folder.appendingPathComponent("body\(index)").path]
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = options + arguments
        if let input {
            let inputFile = folder.appendingPathComponent("input")
            try Data(input).write(to: inputFile)
            process.standardInput = try FileHandle(forReadingFrom: inputFile)
        }
        try process.runOneAtATime()
    }

    func finish() throws -> CurlRun {
        let exitCode = process.waitForExitStatus()
        let elapsed = Date().timeIntervalSince(started)
        defer { try? FileManager.default.removeItem(at: folder) }
        func read(_ name: String) -> Data {
            (try? Data(contentsOf: folder.appendingPathComponent(name))) ?? Data()
        }
        return CurlRun(
            exitCode: exitCode,
            bodies: (0..<urlCount).map { [UInt8](read("body\($0)")) },
            headerDump: String(decoding: read("head"), as: UTF8.self),
            stderr: String(decoding: read("stderr"), as: UTF8.self),
            elapsed: elapsed
        )
    }
}

/// nil when equal; otherwise where they first differ. Used instead of `==` on large byte arrays,
/// whose failure diff in swift-testing is too slow to be useful.
private func mismatch(_ actual: [UInt8], _ expected: some Collection<UInt8>) -> String? {
    let expected = Array(expected)
    guard actual != expected else { return nil }
    let offset = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(actual.count, expected.count)
    return "\(actual.count) bytes instead of \(expected.count), first difference at offset \(offset)"
}

private func runCurl(_ arguments: [String], input: [UInt8]? = nil) throws -> CurlRun {
    try CurlProcess(arguments, input: input).finish()
}
