import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing
import TestOrigin

@testable import FerryEngine

/// An instance whose heartbeats ran late can claim a task again (after another instance took
/// the lapsed lease over and handed the task back) while the old lease's transfer still runs
/// here. The book holds a task under one lease at a time, and each end or stop touches only its
/// own lease's entry.
@Suite("EngineBook: one lease per task")
struct EngineBookTests {
    private let host = HostKey(sessionID: "ses_1", host: "127.0.0.1")

    private func job(_ taskID: String, epoch: Int64) -> TransferJob {
        let claim = ClaimedTask(
            taskID: taskID, tenantID: "ten_1", sessionID: "ses_1", kind: .download, leaseEpoch: epoch, previousAttempts: 0,
            configuration: SessionConfiguration(kind: .background, identifier: "b"),
            originalRequest: TransferRequest(url: "http://127.0.0.1/file"), requestBody: nil, uploadSource: nil, checkpoint: nil,
            resourceDeadline: .distantFuture, bytesExpectedToSend: 0
        )
        return TransferJob(claim: claim, addressPolicy: AddressPolicy(allowedNetworks: []), maximumDataBytes: 1, userAgent: "test")
    }

    @Test("a task claimed again while its old lease runs here waits until that one has gone; the new one's end frees nothing of the old")
    func claimedAgainWhileRunning() {
        var book = EngineBook(workerCount: 2)
        let old = job("tsk_1", epoch: 1)
        let new = job("tsk_1", epoch: 2)
        #expect(book.admit(old, host: host, limit: 2) == .start(worker: 0))
        #expect(book.admit(new, host: host, limit: 2) == .heldUnder(old.lease))
        // The refused claim ends unstarted: its end takes nothing from the book.
        #expect(book.release(new.lease) == nil)
        #expect(book.holds(old.lease))
        #expect(book.worker(of: "tsk_1", lease: new.lease) == nil)
        #expect(book.worker(of: "tsk_1", lease: old.lease) == 0)
        // The old transfer's end frees its slot of the host (limit 1 now lets one start).
        #expect(book.release(old.lease) == nil)
        #expect(!book.holds(old.lease))
        #expect(book.admit(new, host: host, limit: 1) == .start(worker: 0))
        #expect(book.holds(new.lease))
        #expect(book.heldCount == 1)
    }

    @Test("leases not known to hold: those taken before the cutoff, running or waiting, unless a heartbeat renewed them since")
    func leasesTakenBefore() {
        var book = EngineBook(workerCount: 1)
        let start = ContinuousClock.now
        var early = job("tsk_early", epoch: 1)
        early.heldSince = start
        var waiting = job("tsk_waiting", epoch: 1)
        waiting.heldSince = start
        var late = job("tsk_late", epoch: 1)
        late.heldSince = start + .seconds(10)
        #expect(book.admit(early, host: host, limit: 1) == .start(worker: 0))
        #expect(book.admit(waiting, host: host, limit: 1) == .wait)
        #expect(book.admit(late, host: HostKey(sessionID: "ses_1", host: "other"), limit: 1) == .start(worker: 0))
        let cutoff = start + .seconds(5)
        #expect(Set(book.leases(lastHeldBefore: cutoff)) == [early.lease, waiting.lease])
        // A heartbeat renews one (and names a lease not held here, which it forgets).
        book.renewed([early.lease, job("tsk_gone", epoch: 1).lease], at: cutoff)
        #expect(book.leases(lastHeldBefore: cutoff) == [waiting.lease])
        // An older renewal does not undo a newer one.
        book.renewed([early.lease], at: start)
        #expect(book.leases(lastHeldBefore: cutoff) == [waiting.lease])
        #expect(Set(book.taskIDs) == ["tsk_early", "tsk_waiting", "tsk_late"])
    }

    @Test("the same for a job waiting for its host: a stop of one lease leaves another's alone")
    func claimedAgainWhileWaiting() {
        var book = EngineBook(workerCount: 1)
        _ = book.admit(job("tsk_0", epoch: 1), host: host, limit: 1)
        let old = job("tsk_1", epoch: 1)
        let new = job("tsk_1", epoch: 2)
        #expect(book.admit(old, host: host, limit: 1) == .wait)
        #expect(book.admit(new, host: host, limit: 1) == .heldUnder(old.lease))
        #expect(book.removeWaiting(taskID: "tsk_1", lease: new.lease) == nil)
        #expect(book.removeWaiting(taskID: "tsk_1", lease: old.lease)?.lease == old.lease)
        #expect(book.waitingCount == 0)
        #expect(book.admit(new, host: host, limit: 1) == .wait)
    }

    @Test("claimed again while its taken-over lease still runs here (one connection per host): the old transfer stops, the new claim completes", .timeLimit(.minutes(1)))
    func claimedAgainThroughTheEngine() async throws {
        let body = TestOrigin.pattern(count: 200_000, seed: 4)
        let served = Counter()
        // The first request stalls halfway; the others are answered at once.
        let origin = try TestOrigin { request, responder in
            guard served.next() == 1 else {
                try responder.respond(status: 200, headers: [("Content-Type", "application/octet-stream")], body: body)
                return
            }
            try responder.writeHead(status: 200, headers: [("Content-Length", String(body.count))])
            try responder.write(Array(body.prefix(50_000)))
            responder.pause(seconds: 8)
            try responder.write(Array(body.dropFirst(50_000)))
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            var configuration = SessionConfiguration(kind: .default)
            configuration.httpMaximumConnectionsPerHost = 1
            let session = try await ferry.makeSession(configuration)
            let task = try await ferry.startTask(in: session, kind: .data, url: origin.url("/slow"))
            _ = try await ferry.task(task.id) { $0.countOfBytesReceived > 0 || served.count > 0 }
            while served.count == 0 { try await Task.sleep(for: .milliseconds(20)) }
            // As when another instance took the lapsed lease over and handed the task back: the
            // lease is gone from the row, and this instance claims the task again at once.
            try await ferry.database.database.pool.withConnection { connection in
                try connection.execute("UPDATE tasks SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1", [task.id])
                try connection.execute("SELECT pg_notify($1, $2)", [NotificationChannel.work, task.id])
            }
            // Before, the new claim waited for the host's one connection, the old lease's loss
            // then stopped the new claim instead of the old transfer, and the task stayed leased
            // to nothing here for good.
            let done = try await ferry.completion(of: task.id, timeout: .seconds(30))
            #expect(done.state == .completed)
            #expect(done.error == nil)
            #expect(try await ferry.responseBody(of: task.id) == body)
            #expect(served.count >= 2)
        }
    }
}

/// Requests counted across the origin's threads.
private final class Counter: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
