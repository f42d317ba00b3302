import Foundation
import Testing

@Suite("Tasks queued behind httpMaximumConnectionsPerHost")
struct QueueingTests {
    @Test("a queued task starts when a slot frees, not on the scheduler's next tick", .timeLimit(.minutes(1)))
    func queuedTasksFollowEachOther() async throws {
        let origin = try RecordingOrigin(size: 10_000)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let ferry = try await testbed.start("queueing")
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "default", "httpMaximumConnectionsPerHost": 1]).session
            let count = 12
            var tasks: [TaskAnswer] = []
            for _ in 0..<count {
                tasks.append(try await client.createDownload(in: session.id, url: origin.url))
            }
            let start = ContinuousClock.now
            for task in tasks {
                let done = try await client.completion(of: task.id, timeout: .seconds(40))
                #expect(done.state == "completed")
                #expect(done.error == nil)
            }
            let elapsed = ContinuousClock.now - start
            #expect(origin.mostConcurrentResponses == 1)
            Measurements.report("queued-one-connection", [
                "tasks": String(count), "elapsed": Measurements.seconds(elapsed),
                "perTask": String(format: "%.0fms", elapsed.inSeconds * 1000 / Double(count)),
            ])
            // Each transfer takes milliseconds; a second per task means slots are refilled by the timer.
            #expect(elapsed < .seconds(Double(count) / 4), "\(count) tiny downloads through one connection took \(elapsed)")
        }
    }
}
