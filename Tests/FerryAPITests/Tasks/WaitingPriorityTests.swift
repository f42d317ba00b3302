import FerryCore
import Foundation
import Synchronization
import Testing
import TestOrigin

/// URLSessionTask's `priority` orders the tasks waiting for a connection, also after an instance
/// has claimed them and holds them waiting for `httpMaximumConnectionsPerHost`.
@Suite("A changed priority reorders tasks already claimed and waiting for a connection")
struct WaitingPriorityTests {
    /// Holds `/hold` until released, answers everything else at once, and records the order.
    final class HoldingOrigin: Sendable {
        final class Log: Sendable {
            let isReleased = Mutex(false)
            let arrivals = Mutex<[String]>([])
        }

        let origin: TestOrigin
        private let log = Log()

        init() throws {
            let log = self.log
            origin = try TestOrigin { request, responder in
                log.arrivals.withLock { $0.append(request.path) }
                if request.path == "/hold" {
                    let deadline = Date().addingTimeInterval(30)
                    while !log.isReleased.withLock({ $0 }), Date() < deadline { usleep(10_000) }
                }
                try responder.respond(status: 200, body: Array(request.path.utf8))
            }
        }

        func release() { log.isReleased.withLock { $0 = true } }
        var paths: [String] { log.arrivals.withLock { $0 } }
    }

    @Test("PATCHing the last waiting task to priority 1.0 starts it next", .timeLimit(.minutes(1)))
    func patchedTaskStartsNext() async throws {
        let origin = try HoldingOrigin()
        defer { origin.release(); origin.origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession(["kind": "default", "httpMaximumConnectionsPerHost": 1])
            // The one connection is busy before the others exist, so they are all claimed while
            // it is (alone on a host, an instance claims up to four times the limit) and wait.
            let holder = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": .string(origin.origin.url("/hold"))], "resume": true])
            try await waitUntil(timeout: .seconds(10)) { origin.paths == ["/hold"] }
            var waiting: [TaskReply] = []
            for name in ["a", "b", "c"] {
                waiting.append(try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": .string(origin.origin.url("/\(name)"))], "resume": true]))
            }
            try await waitUntil(timeout: .seconds(10)) {
                try await api.database.pool.withConnection { connection in
                    try connection.query(
                        "SELECT count(*) FROM tasks WHERE session_id = $1 AND lease_owner IS NOT NULL", [session.id]
                    ).first?.decode(0, as: Int64.self)
                } == 4
            }

            let patched = try await tenant.call(.patch, "/v1/tasks/\(waiting[2].id)", json: ["priority": 1.0], expecting: .ok, as: TaskReply.self)
            #expect(patched.priority == 1.0)
            // The change reaches the engine by a notification; nothing shows when it has arrived.
            try await Task.sleep(for: .milliseconds(500))
            origin.release()

            for task in [holder] + waiting {
                let done = try await tenant.task(task.id, wait: 20)
                #expect(done.state == "completed")
                #expect(done.error == nil)
            }
            #expect(origin.paths == ["/hold", "/c", "/a", "/b"], "the waiting tasks start by priority, then age")
        }
    }
}
