import Foundation
import Testing

/// One instance stopped mid-transfer and started again: a background download continues from
/// its checkpoint, with `Range`, instead of starting over.
@Suite("A background download survives SIGTERM and SIGKILL of its only instance")
struct RestartTests {
    static let mebibyte = 1024 * 1024

    @Test("SIGTERM checkpoints and exits promptly; after a restart the download resumes with Range", .timeLimit(.minutes(1)))
    func gracefulShutdown() async throws {
        let origin = try RecordingOrigin(size: 16 * Self.mebibyte, bytesPerSecond: 2 * Self.mebibyte)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            var ferry = try await testbed.start("graceful")
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let background: [String: Any] = ["kind": "background", "identifier": "nightly"]
            let (session, created) = try await client.createSession(background)
            #expect(created == 201)
            let task = try await client.createDownload(in: session.id, url: origin.url)
            try await Self.waitForProgress(of: task.id, client: client, atLeast: 2 * Self.mebibyte, instance: ferry)

            let stopped = try await ferry.terminate(timeout: .seconds(15))
            #expect(stopped.elapsed < .seconds(6), "SIGTERM took \(stopped.elapsed) to stop ferry")
            #expect(stopped.status == 0, "ferry exited with \(stopped.status) after SIGTERM\n\(ferry.logTail())")
            let servedBeforeRestart = origin.bytesServed
            origin.setRate(bytesPerSecond: nil)

            ferry = try await testbed.start("graceful")
            let restarted = FerryClient(baseURL: ferry.baseURL, token: client.token)
            let (reattached, status) = try await restarted.createSession(background)
            #expect(status == 200, "re-creating the background session should re-attach")
            #expect(reattached.id == session.id)

            let done = try await restarted.completion(of: task.id, timeout: .seconds(30))
            #expect(done.state == "completed")
            #expect(done.error == nil, "\(String(describing: done.error))\n\(testbed.logs())")
            #expect(try await restarted.file(of: task.id) == Data(origin.body), "the resumed file differs from the origin's")
            let arrivals = origin.arrivals
            #expect(arrivals.count == 2, "requests: \(arrivals.map { $0.range ?? "-" })")
            // Both instances' logs when it did not resume: this failed once under load (the
            // download started over), and the logs say whether the checkpoint was written.
            let resumedAt = try #require(arrivals.last?.rangeStart, "the second request carried no Range: bytes=N-\n\(testbed.logs())")
            #expect(resumedAt > 0)
            #expect(arrivals.last?.ifRange == origin.etag)
            expectCompleteEventLog(try await testbed.events(of: task.id), resumedAt: resumedAt)
            Measurements.report("sigterm-restart", [
                "stop": Measurements.seconds(stopped.elapsed),
                "servedBeforeRestart": Measurements.mebibytes(servedBeforeRestart),
                "resumedAt": Measurements.mebibytes(resumedAt),
                "fetchedTwice": Measurements.mebibytes(origin.bytesServed - origin.body.count),
            ])
        }
    }

    @Test("SIGTERM while the database is away stops within seconds; the restarted instance finishes the download", .timeLimit(.minutes(2)))
    func shutdownWhileDatabaseAway() async throws {
        let origin = try RecordingOrigin(size: 16 * Self.mebibyte, bytesPerSecond: 2 * Self.mebibyte)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let database = try #require(testbed.database)
            var ferry = try await testbed.start("outage")
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "background", "identifier": "nightly"]).session
            let task = try await client.createDownload(in: session.id, url: origin.url)
            try await Self.waitForProgress(of: task.id, client: client, atLeast: 2 * Self.mebibyte, instance: ferry)

            try await database.beginOutage()
            let stopped = try await ferry.terminate(timeout: .seconds(60))
            // Each part of the shutdown waited out the database in turn: 36 s measured before.
            #expect(stopped.elapsed < .seconds(10), "SIGTERM took \(stopped.elapsed) with the database away\n\(ferry.logTail())")
            try await database.endOutage()
            origin.setRate(bytesPerSecond: nil)

            // What could not be written is taken back by the next start, as after a kill.
            ferry = try await testbed.start("outage")
            let restarted = FerryClient(baseURL: ferry.baseURL, token: client.token)
            let done = try await restarted.completion(of: task.id, timeout: .seconds(40))
            #expect(done.state == "completed")
            #expect(done.error == nil, "\(String(describing: done.error))\n\(testbed.logs())")
            #expect(try await restarted.file(of: task.id) == Data(origin.body), "the file differs from the origin's")
            Measurements.report("sigterm-database-away", ["stop": Measurements.seconds(stopped.elapsed)])
        }
    }

    @Test("kill -9 mid-transfer: the restarted instance resumes from the checkpoint; few bytes are fetched twice", .timeLimit(.minutes(1)))
    func killNine() async throws {
        let origin = try RecordingOrigin(size: 64 * Self.mebibyte, bytesPerSecond: 2 * Self.mebibyte)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            var ferry = try await testbed.start("crashing")
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "background", "identifier": "nightly"]).session
            let task = try await client.createDownload(in: session.id, url: origin.url)
            try await Self.waitForProgress(of: task.id, client: client, atLeast: 6 * Self.mebibyte, instance: ferry)
            let checkpointed = try await eventually(timeout: .seconds(10), every: .milliseconds(100)) {
                try await testbed.checkpointedBytes(of: task.id) > 0 ? true : nil
            }
            try #require(checkpointed == true, "no checkpoint was recorded\n\(ferry.logTail())")

            try await ferry.kill()
            let killedAt = ContinuousClock.now
            let servedBeforeKill = origin.bytesServed
            origin.setRate(bytesPerSecond: nil)

            ferry = try await testbed.start("crashing")
            let restarted = FerryClient(baseURL: ferry.baseURL, token: client.token)
            let done = try await restarted.completion(of: task.id, timeout: .seconds(40))
            #expect(done.state == "completed")
            #expect(done.error == nil, "\(String(describing: done.error))\n\(testbed.logs())")
            #expect(try await restarted.file(of: task.id) == Data(origin.body), "the resumed file differs from the origin's")

            let arrivals = origin.arrivals
            #expect(arrivals.count == 2, "requests: \(arrivals.map { $0.range ?? "-" })")
            let resumedAt = try #require(arrivals.last?.rangeStart, "the request after the crash carried no Range: bytes=N-")
            #expect(resumedAt > 0)
            expectCompleteEventLog(try await testbed.events(of: task.id), resumedAt: resumedAt)
            let fetchedTwice = origin.bytesServed - origin.body.count
            // Checkpoints come every 2 s (or 4 MiB) and progress every second: at 2 MiB/s at most
            // about 6 MiB plus socket buffers are fetched again, not the whole file.
            #expect(fetchedTwice < 8 * Self.mebibyte, "\(fetchedTwice) bytes were fetched twice")
            Measurements.report("kill-9-restart", [
                "size": Measurements.mebibytes(origin.body.count),
                "servedBeforeKill": Measurements.mebibytes(servedBeforeKill),
                "resumedAt": Measurements.mebibytes(resumedAt),
                "fetchedTwice": Measurements.mebibytes(fetchedTwice),
                "killToResumedRequest": arrivals.last.map { Measurements.seconds($0.at - killedAt) } ?? "-",
            ])
        }
    }

    /// Waits until the task reports `bytes` received (progress is written about once a second).
    static func waitForProgress(of taskID: String, client: FerryClient, atLeast bytes: Int, instance: FerryInstance) async throws {
        let progressed = try await eventually(timeout: .seconds(20), every: .milliseconds(100)) { () -> TaskAnswer? in
            let task = try await client.task(taskID)
            return task.state == "running" && task.countOfBytesReceived >= Int64(bytes) ? task : nil
        }
        if progressed == nil {
            let task = try await client.task(taskID)
            throw HarnessError("task \(taskID) did not reach \(bytes) bytes: state \(task.state), \(task.countOfBytesReceived) bytes\n\(instance.logTail())")
        }
    }
}
