import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

/// Each session keeps its own connections, as URLSession does: a connection opened for one
/// session is never reused by another (which would tell one tenant what hosts another had just
/// talked to), and is reused by the same session's next request.
@Suite("Connection pools are per session")
struct ConnectionPoolTests {
    private func isReused(_ ferry: EngineHarness, _ taskID: String) async throws -> Bool? {
        let metrics = try #require(try await ferry.tasks.metrics(tenantID: ferry.tenant.id, taskID: taskID))
        guard case .array(let transactions)? = metrics["transactionMetrics"], case .bool(let reused)? = transactions.last?["isReusedConnection"] else {
            return nil
        }
        return reused
    }

    @Test("a session never reuses another session's connection, and reuses its own")
    func sessionsKeepTheirConnections() async throws {
        let origin = try TestOrigin { _, responder in try responder.respond(status: 200, body: Array("ok".utf8)) }
        defer { origin.stop() }
        // One worker: with one pool for all, the second session would take the first's connection.
        try await EngineHarness.run(configure: { $0.workerCount = 1 }) { ferry in
            let first = try await ferry.makeSession()
            let second = try await ferry.makeSession()
            func fetch(_ session: SessionRecord, _ path: String) async throws -> (connection: Int, reused: Bool?) {
                let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url(path)).id)
                #expect(task.response?.statusCode == 200)
                return (try #require(origin.requests(path: path).last?.connectionIndex), try await isReused(ferry, task.id))
            }
            let a = try await fetch(first, "/a")
            #expect(a.reused == false)
            let b = try await fetch(second, "/b")
            #expect(b.connection != a.connection, "the second session took the first's connection")
            #expect(b.reused == false)
            let c = try await fetch(first, "/c")
            #expect(c.connection == a.connection, "the first session did not reuse its own connection")
            #expect(c.reused == true)
            let d = try await fetch(second, "/d")
            #expect(d.connection == b.connection)
        }
    }
}
