import FerryCore
@testable import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Synchronization
import Testing
import TestOrigin

@Suite("An instance whose heartbeats fail stops its transfers before their leases lapse, when another could take them over")
struct LeaseWatchTests {
    @Test("beside another live instance: the transfer stops while its lease still holds, and the lapsed lease is reaped by the same instance")
    func besideAnotherInstance() async throws {
        let (origin, _) = try Self.slowOrigin()
        defer { origin.stop() }
        let ferry = try await EngineHarness(configure: { $0.leaseDuration = .seconds(3) })
        defer { try? FileManager.default.removeItem(atPath: ferry.dataDirectory) }
        let created = try await Self.startDownload(on: ferry, from: origin)
        // Another instance, alive (as far as the heartbeats can tell) for the whole test.
        try await execute(
            "INSERT INTO instances (id, workers, version, heartbeat_at) VALUES ('other', 1, 'test', now() + interval '1 hour')", on: ferry
        )
        #expect(try await Self.eventually { ferry.engine.othersMayTakeOver.load(ordering: .acquiring) })

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

    @Test("alone: nobody could take the lease over, so the transfer rides the failed heartbeats out and completes")
    func alone() async throws {
        let (origin, body) = try Self.slowOrigin()
        defer { origin.stop() }
        let ferry = try await EngineHarness(configure: { $0.leaseDuration = .seconds(3) })
        defer { try? FileManager.default.removeItem(atPath: ferry.dataDirectory) }
        let created = try await Self.startDownload(on: ferry, from: origin)
        #expect(try await Self.eventually { !ferry.engine.othersMayTakeOver.load(ordering: .acquiring) })

        // Longer than the lease: it lapses in the database meanwhile.
        try await execute("ALTER TABLE instances RENAME TO instances_away", on: ferry)
        try await Task.sleep(for: .seconds(4))
        let stillRunning = ferry.engine.book.withLock { $0.heldCount } == 1
        try await execute("ALTER TABLE instances_away RENAME TO instances", on: ferry)
        let task = try await ferry.completion(of: created.id, timeout: .seconds(30))
        let file = try ferry.downloadedFile(of: created.id)
        await ferry.stop()
        await ferry.database.close()

        #expect(stillRunning, "the transfer was stopped though no other instance could take its lease over")
        #expect(task.error == nil)
        #expect(file == body)
        #expect(origin.requests(path: "/w.bin").count == 1, "the download was not started again")
    }

    /// Four megabytes at 400 kB/s: ten seconds, with a strong entity tag (resumable).
    private static func slowOrigin() throws -> (TestOrigin, [UInt8]) {
        let body = TestOrigin.pattern(count: 4_000_000, seed: 9)
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(body, for: request, etag: "\"w1\"", bytesPerSecond: 400_000)
        }
        return (origin, body)
    }

    /// A download past its first checkpoint (two seconds at 400 kB/s), so there is something to resume.
    private static func startDownload(on ferry: EngineHarness, from origin: TestOrigin) async throws -> TaskRecord {
        let session = try await ferry.makeSession()
        let created = try await ferry.startTask(in: session, kind: .download, url: origin.url("/w.bin"))
        _ = try await ferry.task(created.id) { $0.countOfBytesReceived > 1_000_000 }
        return created
    }

    private static func eventually(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
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
