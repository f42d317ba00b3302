import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing
import TestOrigin

/// `reset` and `flush` reach the transfers of their session: a reset's running transfers go on
/// without the emptied cookies and credentials, and after either, no request of the session
/// reuses a connection opened before it.
@Suite("A session's reset and flush reach its transfers and connections")
struct SessionRenewalTests {
    /// Held shut by the test; origin threads wait at it.
    final class Gate: Sendable {
        private let isOpen = Mutex(false)

        func open() { isOpen.withLock { $0 = true } }

        func pass() {
            while !isOpen.withLock({ $0 }) { usleep(10_000) }
        }
    }

    /// /login sets a cookie; /slow waits at the gate and redirects to `to`; /whoami echoes the
    /// Cookie it received; /private needs Basic credentials.
    private func origin(gate: Gate) throws -> TestOrigin {
        try TestOrigin(TestOrigin.routes([
            "/login": { _, responder in
                try responder.respond(status: 200, headers: [("Set-Cookie", "user=ada; Path=/")], body: Array("in".utf8))
            },
            "/slow": { request, responder in
                gate.pass()
                try responder.redirect(to: request.query["to"] ?? "/whoami")
            },
            "/whoami": { request, responder in
                try responder.respond(status: 200, body: Array((request.header("Cookie") ?? "none").utf8))
            },
            "/private": { _, responder in
                guard try responder.requireBasicAuth(user: "ada", password: "lovelace") else { return }
                try responder.respond(status: 200, body: Array("secret".utf8))
            },
        ]))
    }

    private func body(_ ferry: EngineHarness, of taskID: String) async throws -> String {
        String(decoding: try await ferry.responseBody(of: taskID) ?? [], as: UTF8.self)
    }

    /// Connections the origin saw requests of `paths` on.
    private func connections(_ origin: TestOrigin, paths: Set<String>) -> Set<Int> {
        Set(origin.requests.filter { paths.contains($0.path) }.map(\.connectionIndex))
    }

    @Test("a reset empties the cookies and credentials of running transfers and of later ones, on new connections")
    func resetReachesRunningTransfers() async throws {
        let gate = Gate()
        let origin = try origin(gate: gate)
        defer { gate.open(); origin.stop() }
        // One worker: one connection pool, so reuse would show.
        try await EngineHarness.run(configure: { $0.workerCount = 1 }) { ferry in
            let session = try await ferry.makeSession()
            try await ferry.storeCredential(in: session, port: origin.port)
            let login = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/login")).id)
            #expect(login.response?.statusCode == 200)
            try await Task.sleep(for: .milliseconds(300))  // the jar learns the cookie asynchronously
            // Before the reset, the session sends its cookie and answers challenges from its storage.
            let before = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/whoami")).id)
            #expect(try await body(ferry, of: before.id) == "user=ada")

            // Two transfers whose first hop is under way when the session is reset.
            let toCookie = try await ferry.startTask(in: session, kind: .data, url: origin.url("/slow?to=/whoami"))
            let toPrivate = try await ferry.startTask(in: session, kind: .data, url: origin.url("/slow?to=/private"))
            let deadline = ContinuousClock.now + .seconds(10)
            while origin.requests(path: "/slow").count < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(origin.requests(path: "/slow").count == 2)
            let oldConnections = connections(origin, paths: ["/login", "/whoami", "/slow"])
            _ = try await ferry.database.database.sessions.reset(tenantID: ferry.tenant.id, sessionID: session.id)
            try await Task.sleep(for: .milliseconds(300))  // the NOTIFY reaches the engine
            gate.open()

            let cookieTask = try await ferry.completion(of: toCookie.id)
            #expect(try await body(ferry, of: cookieTask.id) == "none", "the running transfer's next hop sent the emptied cookie")
            let privateTask = try await ferry.completion(of: toPrivate.id)
            #expect(privateTask.response?.statusCode == 401, "the running transfer answered with an emptied credential")
            let after = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/whoami")).id)
            #expect(try await body(ferry, of: after.id) == "none")

            // Every request after the reset (the redirects' next hops, the later task) went out on
            // a connection opened after it.
            let afterReset = Set(origin.requests.filter { $0.path == "/private" || ($0.path == "/whoami" && $0.header("Cookie") == nil) }.map(\.connectionIndex))
            #expect(!afterReset.isEmpty)
            #expect(afterReset.isDisjoint(with: oldConnections), "after the reset: \(afterReset), before: \(oldConnections)")
        }
    }

    @Test("a flush renews the session's connections, at once and later")
    func flushRenewsConnections() async throws {
        let origin = try TestOrigin { _, responder in try responder.respond(status: 200, body: Array("ok".utf8)) }
        defer { origin.stop() }
        try await EngineHarness.run(configure: { $0.workerCount = 1 }) { ferry in
            let session = try await ferry.makeSession()
            func fetch(_ path: String) async throws -> Int {
                _ = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url(path)).id)
                return try #require(origin.requests(path: path).last?.connectionIndex)
            }
            let first = try await fetch("/a")
            #expect(try await fetch("/b") == first, "without a flush the connection is reused")
            _ = try await ferry.database.database.sessions.flush(tenantID: ferry.tenant.id, sessionID: session.id)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await fetch("/c") != first)
            // Past the first two seconds (each exchange opens a new connection until then), the
            // connection opened before the flush stays unused and newer ones are reused.
            try await Task.sleep(for: .milliseconds(2500))
            let later = try await fetch("/d")
            #expect(later != first)
            // The flush's notice also drops the session's idle connections on each worker. On a
            // loaded machine (a CI run) it can arrive after "/d", and drop that connection too:
            // then "/e" opens one, which "/f" reuses.
            let next = try await fetch("/e")
            let reused = next == later ? next : try await fetch("/f")
            #expect(reused == next && next != first, "connections opened after the flush are reused")
        }
    }

    @Test("a flush checkpoints a running download at the next heartbeat, however little it received")
    func flushCheckpointsDownloads() async throws {
        let gate = Gate()
        let body = TestOrigin.pattern(count: 200_000)
        let origin = try TestOrigin { request, responder in
            try responder.writeHead(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"v1\"")])
            try responder.write(Array(body[0..<10_000]))
            gate.pass()
            try responder.write(Array(body[10_000...]))
        }
        defer { gate.open(); origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let task = try await ferry.startTask(in: session, kind: .download, url: origin.url("/big.bin"))
            let receiving = try await ferry.task(task.id) { $0.countOfBytesReceived >= 10_000 }
            #expect(receiving.countOfBytesReceived == 10_000)
            func checkpointed() async throws -> Int64? {
                try await ferry.database.database.pool.withConnection { connection in
                    try connection.query("SELECT (checkpoint->>'bytesOnDisk')::bigint FROM tasks WHERE id = $1", [task.id])[0].decode(0, as: Int64?.self)
                }
            }
            // 10 kB in less than two seconds: not worth a checkpoint of its own.
            try await Task.sleep(for: .milliseconds(600))
            #expect(try await checkpointed() == nil)
            _ = try await ferry.database.database.sessions.flush(tenantID: ferry.tenant.id, sessionID: session.id)
            let deadline = ContinuousClock.now + .seconds(3)
            while try await checkpointed() == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await checkpointed() == 10_000)
            gate.open()
            #expect(try await ferry.completion(of: task.id).error == nil)
        }
    }
}
