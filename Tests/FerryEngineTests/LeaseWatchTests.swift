import FerryCore
@testable import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing
import TestOrigin

@Suite("An instance whose heartbeats fail stops its transfers before their leases lapse")
struct LeaseWatchTests {
    @Test("the transfer stops while its lease still holds; the lapsed lease is then reaped by the same instance")
    func heartbeatsFail() async throws {
        let body = TestOrigin.pattern(count: 4_000_000, seed: 9)
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(body, for: request, etag: "\"w1\"", bytesPerSecond: 400_000)
        }
        defer { origin.stop() }
        let ferry = try await EngineHarness(configure: { $0.leaseDuration = .seconds(3) })
        defer { try? FileManager.default.removeItem(atPath: ferry.dataDirectory) }
        let session = try await ferry.makeSession()
        let created = try await ferry.startTask(in: session, kind: .download, url: origin.url("/w.bin"))
        // Past the first checkpoint (two seconds at 400 kB/s), so there is something to resume.
        _ = try await ferry.task(created.id) { $0.countOfBytesReceived > 1_000_000 }

        // Heartbeats now fail (they write the instance's row first); claims and reaps still work.
        try await execute("ALTER TABLE instances RENAME TO instances_away", on: ferry)
        let brokenAt = ContinuousClock.now
        var leaseHeldWhenStopped: Bool?
        while ContinuousClock.now - brokenAt < .seconds(8) {
            if ferry.engine.book.withLock({ $0.heldCount }) == 0 {
                leaseHeldWhenStopped = try await value(
                    "SELECT coalesce(lease_expires_at > now(), false) FROM tasks WHERE id = $1", [created.id], on: ferry, as: Bool.self
                )
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let stoppedAfter = ContinuousClock.now - brokenAt
        let task = try await ferry.task(created.id, timeout: .seconds(10)) { $0.state == .completed }
        try await execute("ALTER TABLE instances_away RENAME TO instances", on: ferry)
        await ferry.stop()
        await ferry.database.close()

        // Without the watch, the transfer ran on to its end (ten seconds) past its lapsed lease.
        #expect(leaseHeldWhenStopped == true, "stopped after \(stoppedAfter)")
        // A default session's task whose owner stopped: -1005, with resume data.
        #expect(task.state == .completed)
        #expect(task.error?.code == -1005)
        let token = try ferry.resumeData.decode(try #require(task.error?.resumeData), tenantID: ferry.tenant.id)
        #expect(token.bytesOnDisk > 0)
    }

    private func execute(_ sql: String, on ferry: EngineHarness) async throws {
        _ = try await ferry.database.database.pool.withConnection { try $0.execute(sql) }
    }

    private func value<T: PostgresDecodable & Sendable>(
        _ sql: String, _ parameters: [any PostgresBindable], on ferry: EngineHarness, as type: T.Type
    ) async throws -> T {
        try await ferry.database.database.pool.withConnection { try $0.query(sql, parameters)[0].decode(0, as: T.self) }
    }
}
