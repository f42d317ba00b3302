import FerryCore
@testable import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing
import TestOrigin

@Suite("An instance whose heartbeats fail stops its transfers before their leases lapse, when another could take them over")
struct LeaseWatchTests {
    @Test("beside another live instance: the transfer stops while its lease still holds, and the lapsed lease is reaped by the same instance")
    func besideAnotherInstance() async throws {
        // Leases of 10 s: the watch stops the transfer 2 s before its lease lapses, a margin that
        // holds with the whole suite running on two cores (with 3 s leases, 0.6 s did not always).
        try await Self.withRunningDownload(lease: .seconds(10), bytes: 8_000_000) { ferry, _, created, _ in
            // Another instance, alive (as far as the heartbeats can tell) for the whole test.
            try await ferry.execute(
                "INSERT INTO instances (id, workers, version, heartbeat_at) VALUES ('other', 1, 'test', now() + interval '1 hour')"
            )
            #expect(await becomesTrue(within: .seconds(5)) { ferry.engine.othersMayTakeOver.load(ordering: .acquiring) })

            // Heartbeats now fail (they write the instance's row first); claims and reaps still work.
            try await ferry.execute("ALTER TABLE instances RENAME TO instances_away")
            let brokenAt = ContinuousClock.now
            var leaseHeldWhenStopped: Bool?
            while ContinuousClock.now - brokenAt < .seconds(15) {
                if ferry.engine.book.withLock({ $0.heldCount }) == 0 {
                    leaseHeldWhenStopped = try await ferry.value(
                        "SELECT coalesce(lease_expires_at > now(), false) FROM tasks WHERE id = $1", [created.id], as: Bool.self
                    )
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            let stoppedAfter = ContinuousClock.now - brokenAt
            let task = try await ferry.task(created.id, timeout: .seconds(20)) { $0.state == .completed }
            try await ferry.execute("ALTER TABLE instances_away RENAME TO instances")

            // Without the watch, the transfer ran on to its end (twenty seconds) past its lapsed lease.
            #expect(leaseHeldWhenStopped == true, "stopped after \(stoppedAfter)")
            // A default session's task whose owner stopped: -1005, with resume data.
            #expect(task.state == .completed)
            #expect(task.error?.code == -1005)
            let token = try ferry.resumeData.decode(try #require(task.error?.resumeData), tenantID: ferry.tenant.id)
            #expect(token.bytesOnDisk > 0)
        }
    }

    @Test("alone: nobody could take the lease over, so the transfer rides the failed heartbeats out and completes")
    func alone() async throws {
        try await Self.withRunningDownload(lease: .seconds(3), bytes: 4_000_000) { ferry, origin, created, body in
            #expect(await becomesTrue(within: .seconds(5)) { !ferry.engine.othersMayTakeOver.load(ordering: .acquiring) })

            // Longer than the lease: it lapses in the database meanwhile.
            try await ferry.execute("ALTER TABLE instances RENAME TO instances_away")
            try await Task.sleep(for: .seconds(4))
            let stillRunning = ferry.engine.book.withLock { $0.heldCount } == 1
            try await ferry.execute("ALTER TABLE instances_away RENAME TO instances")
            let task = try await ferry.completion(of: created.id, timeout: .seconds(30))

            #expect(stillRunning, "the transfer was stopped though no other instance could take its lease over")
            #expect(task.error == nil)
            #expect(try ferry.downloadedFile(of: created.id) == body)
            #expect(origin.requests(path: "/w.bin").count == 1, "the download was not started again")
        }
    }

    /// An instance with leases of `lease`, running a download of `bytes` at 400 kB/s (resumable)
    /// past its first checkpoint (two seconds), so there is something to resume; stopped after
    /// `body`.
    private static func withRunningDownload(
        lease: Duration, bytes: Int, _ body: (EngineHarness, TestOrigin, TaskRecord, [UInt8]) async throws -> Void
    ) async throws {
        let content = TestOrigin.pattern(count: bytes, seed: 9)
        let origin = try TestOrigin.slowly(serving: content, etag: "\"w1\"", bytesPerSecond: 400_000)
        defer { origin.stop() }
        let ferry = try await EngineHarness(configure: { $0.leaseDuration = lease })
        defer { try? FileManager.default.removeItem(atPath: ferry.dataDirectory) }
        let session = try await ferry.makeSession()
        let created = try await ferry.startTask(in: session, kind: .download, url: origin.url("/w.bin"))
        _ = try await ferry.task(created.id) { $0.countOfBytesReceived > 1_000_000 }
        do {
            try await body(ferry, origin, created, content)
        } catch {
            await ferry.stop()
            await ferry.database.close()
            throw error
        }
        await ferry.stop()
        await ferry.database.close()
    }
}
