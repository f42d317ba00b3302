import Foundation
import Testing

/// Two instances on one database and data folder: what happens to a transfer when its owner
/// dies, and how a command given to the other instance reaches the owner.
@Suite("Two instances sharing a database and a data folder")
struct TwoInstanceTests {
    static let mebibyte = 1024 * 1024

    @Test("a default session's download on a killed instance completes with -1005 and resume data that finishes it", .timeLimit(.minutes(1)))
    func defaultSessionLosesItsInstance() async throws {
        let origin = try RecordingOrigin(size: 16 * Self.mebibyte, bytesPerSecond: 2 * Self.mebibyte)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let pair = try await InstancePair.start(in: testbed)
            let session = try await pair.client(pair.left).createSession(["kind": "default"]).session
            let task = try await pair.client(pair.left).createDownload(in: session.id, url: origin.url)
            let (owner, survivor) = try await pair.runningOwner(of: task.id, in: testbed, atLeast: Self.mebibyte, checkpointed: true)

            try await owner.kill()
            let client = pair.client(survivor)
            let failed = try await client.completion(of: task.id, timeout: .seconds(40))
            #expect(failed.state == "completed")
            #expect(failed.error?.code == -1005, "error: \(String(describing: failed.error))")
            let resumeData = try #require(failed.error?.resumeData, "the -1005 error carries no resumeData\n\(testbed.logs())")

            origin.setRate(bytesPerSecond: nil)
            let resumed = try await client.createDownload(in: session.id, resumeData: resumeData)
            let done = try await client.completion(of: resumed.id, timeout: .seconds(30))
            #expect(done.state == "completed")
            #expect(done.error == nil, "\(String(describing: done.error))")
            #expect(try await client.file(of: resumed.id) == Data(origin.body), "the file resumed from resumeData differs from the origin's")
            let resumedAt = origin.arrivals.last?.rangeStart
            #expect((resumedAt ?? 0) > 0, "the resumed task did not send Range: bytes=N- (requests: \(origin.arrivals.map { $0.range ?? "-" }))")
        }
    }

    @Test("a background download on a killed instance is taken over by the other one and finishes byte-exact", .timeLimit(.minutes(1)))
    func backgroundTakeover() async throws {
        let origin = try RecordingOrigin(size: 24 * Self.mebibyte, bytesPerSecond: 2 * Self.mebibyte)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let pair = try await InstancePair.start(in: testbed)
            let session = try await pair.client(pair.left).createSession(["kind": "background", "identifier": "nightly"]).session
            let task = try await pair.client(pair.left).createDownload(in: session.id, url: origin.url)
            let (owner, survivor) = try await pair.runningOwner(of: task.id, in: testbed, atLeast: Self.mebibyte, checkpointed: true)

            try await owner.kill()
            let killedAt = ContinuousClock.now
            let requestsBeforeKill = origin.arrivals.count
            origin.setRate(bytesPerSecond: nil)

            let client = pair.client(survivor)
            let done = try await client.completion(of: task.id, timeout: .seconds(45))
            #expect(done.state == "completed")
            #expect(done.error == nil, "\(String(describing: done.error))\n\(testbed.logs())")
            #expect(try await client.file(of: task.id) == Data(origin.body), "the file finished by the other instance differs from the origin's")
            #expect(try await testbed.leaseOwner(of: task.id) == nil)

            let takeover = try #require(origin.arrivals.dropFirst(requestsBeforeKill).first, "no request reached the origin after the kill")
            let takeoverTime = takeover.at - killedAt
            #expect((takeover.rangeStart ?? 0) > 0, "the takeover started over instead of resuming (Range \(takeover.range ?? "none"))")
            #expect(takeoverTime < .seconds(30), "takeover took \(takeoverTime)")
            expectCompleteEventLog(try await testbed.events(of: task.id), resumedAt: takeover.rangeStart)
            Measurements.report("takeover", [
                "killToFirstRequest": Measurements.seconds(takeoverTime),
                "resumedAt": Measurements.mebibytes(takeover.rangeStart ?? 0),
                "fetchedTwice": Measurements.mebibytes(origin.bytesServed - origin.body.count),
            ])
        }
    }

    @Test("a cancel sent to the other instance stops the owner's transfer within two seconds", .timeLimit(.minutes(1)))
    func cancelThroughTheOtherInstance() async throws {
        let origin = try RecordingOrigin(size: 32 * Self.mebibyte, bytesPerSecond: 512 * 1024)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let pair = try await InstancePair.start(in: testbed)
            let session = try await pair.client(pair.left).createSession(["kind": "default"]).session
            let task = try await pair.client(pair.left).createDownload(in: session.id, url: origin.url)
            let (_, other) = try await pair.runningOwner(of: task.id, in: testbed, atLeast: 1)

            let client = pair.client(other)
            let start = ContinuousClock.now
            let answer = try await client.command("cancel", task: task.id)
            #expect(answer.state == "canceling" || answer.state == "completed")
            let done = try await client.completion(of: task.id, timeout: .seconds(10))
            let elapsed = ContinuousClock.now - start
            #expect(done.state == "completed")
            #expect(done.error?.code == -999, "error: \(String(describing: done.error))")
            #expect(elapsed < .seconds(2), "the cancel took \(elapsed) to complete the task")
            let closed = try await eventually(timeout: .seconds(2)) { origin.openConnections == 0 ? true : nil }
            #expect(closed == true, "the owner kept the origin connection open after the cancel")
            Measurements.report("cancel-through-other-instance", ["cancelToCompleted": Measurements.seconds(elapsed)])
        }
    }

    @Test("httpMaximumConnectionsPerHost holds across both instances", .timeLimit(.minutes(1)))
    func connectionLimitAcrossInstances() async throws {
        let origin = try RecordingOrigin(size: 192 * 1024, bytesPerSecond: 192 * 1024)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let pair = try await InstancePair.start(in: testbed)
            let session = try await pair.client(pair.left)
                .createSession(["kind": "default", "httpMaximumConnectionsPerHost": 2]).session
            var tasks: [TaskAnswer] = []
            for index in 0..<8 {
                // Created through both instances, so both have work to claim.
                tasks.append(try await pair.client(index.isMultiple(of: 2) ? pair.left : pair.right).createDownload(in: session.id, url: origin.url))
            }
            var owners: Set<String> = []
            for task in tasks {
                let client = pair.client(pair.left)
                while try await client.task(task.id).state != "completed" {
                    if let owner = try await testbed.leaseOwner(of: task.id) { owners.insert(owner) }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let done = try await client.task(task.id)
                #expect(done.error == nil, "\(String(describing: done.error))")
                #expect(done.countOfBytesReceived == Int64(origin.body.count))
            }
            #expect(origin.mostConcurrentResponses <= 2, "the origin served \(origin.mostConcurrentResponses) responses at once")
            Measurements.report("connection-limit-two-instances", [
                "mostConcurrentResponses": String(origin.mostConcurrentResponses), "owners": owners.sorted().joined(separator: ","),
            ])
        }
    }
}
