import Foundation
import Testing

/// Two instances deliver one delegate's webhooks; one is killed while its requests are open.
/// Delivery is at least once: what the dead instance had in flight is sent again by the other
/// once the leases lapse (with what it had answered but not yet recorded), and nothing else is
/// lost, reordered or repeated.
@Suite("Webhook deliveries survive the SIGKILL of one of two instances")
struct WebhookTakeoverTests {
    /// The delegate's `maximumInFlight`: requests open to the endpoint across the cluster.
    static let maximumInFlight = 4
    static let taskCount = 48
    /// Short, so the survivor takes the dead instance's deliveries over within the test's time
    /// (requests then time out after a third of it, 2 s; the receiver answers within 0.16 s).
    static let leaseSeconds = 6
    /// Events nobody decides on, so no transfer waits for the receiver: the tasks all finish
    /// first, and the kill hits deliveries only, not transfers (whose own lease is 15 s).
    static let subscribed = [
        "task.didCreateTask", "downloadTask.didWriteData", "downloadTask.didFinishDownloadingTo",
        "task.didFinishCollectingMetrics", "task.didCompleteWithError",
    ]

    @Test("killing an instance mid-delivery loses no event, keeps per-task order and repeats only what it held",
          .timeLimit(.minutes(1)))
    func killMidDelivery() async throws {
        // 80–160 ms per answer with 4 in flight: about 35 events/s, so the ~240 events of the
        // tasks are still being delivered seconds after the tasks are done.
        let receiver = try SlowWebhookReceiver(delay: 0.08...0.16)
        defer { receiver.stop() }
        let origin = try RecordingOrigin(size: 4096)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let pair = try await InstancePair.start(in: testbed, environment: ["FERRY_WEBHOOK_LEASE": String(Self.leaseSeconds)])
            let session = try await pair.client(pair.left).createSession(
                ["kind": "default"],
                delegate: ["url": receiver.url, "events": Self.subscribed, "maximumInFlight": Self.maximumInFlight]
            )
            for index in 0..<Self.taskCount {
                // Created through both instances, so both run transfers and write events; a
                // query per task keeps the URL cache out of it.
                let client = pair.client(index.isMultiple(of: 2) ? pair.left : pair.right)
                _ = try await client.createDownload(in: session.id, url: "\(origin.url)?task=\(index)")
            }
            let reader = pair.client(pair.right)
            let finished = try await eventually(timeout: .seconds(20), every: .milliseconds(100)) { () -> Bool? in
                try await reader.tasks(inSession: session.id).filter { $0.state == "completed" }.count == Self.taskCount ? true : nil
            }
            try #require(finished == true, "the tasks did not all complete\n\(testbed.logs())")

            // The instance to kill holds leases now: requests open at the receiver, or answered
            // and not yet recorded.
            let victim = try await eventually(timeout: .seconds(5), every: .milliseconds(10)) { () -> FerryInstance? in
                for instance in [pair.left, pair.right] {
                    if try await testbed.leasedDeliveries(by: instance.configuration.instanceID) > 0 { return instance }
                }
                return nil
            }
            let owner = try #require(victim, "neither instance was delivering when the tasks had finished")
            let pendingBeforeKill = try await testbed.pendingDeliveries(ofSession: session.id)
            let arrivalsBeforeKill = receiver.arrivals.count
            try await owner.kill()
            let killedAt = ContinuousClock.now
            let orphaned = try await testbed.leasedDeliveries(by: owner.configuration.instanceID)
            try #require(orphaned > 0, "the killed instance held no delivery any more: nothing was in flight")

            let events = try await testbed.events(ofSession: session.id, types: Self.subscribed)
            let expected = Set(events.map(\.id))
            let survivorDone = try await eventually(timeout: .seconds(25), every: .milliseconds(100)) { () -> Bool? in
                guard expected.isSubset(of: receiver.arrivals) else { return nil }
                return try await testbed.pendingDeliveries(ofSession: session.id) == 0 ? true : nil
            }
            let drained = ContinuousClock.now - killedAt

            let arrivals = receiver.arrivals
            let missing = expected.subtracting(arrivals)
            #expect(missing.isEmpty, "\(missing.count) of \(expected.count) events never arrived\n\(testbed.logs())")
            #expect(Set(arrivals).isSubset(of: expected), "the receiver got webhooks of events it did not subscribe to")
            #expect(survivorDone == true, "deliveries were still pending \(drained) after the kill\n\(testbed.logs())")
            // Every download has at least these four (didWriteData may be coalesced away).
            #expect(events.count >= 4 * Self.taskCount, "only \(events.count) events for \(Self.taskCount) downloads")

            // Only what the killed instance held leased can come twice: its requests in flight, and
            // those answered whose record (a group commit, tens of milliseconds) was not written yet.
            let duplicates = arrivals.count - Set(arrivals).count
            #expect(Int64(duplicates) <= orphaned, "\(duplicates) deliveries arrived twice, but the killed instance held only \(orphaned)")
            // Both instances' requests together: the endpoint's limit holds across the cluster.
            #expect(receiver.mostOpen <= Self.maximumInFlight, "\(receiver.mostOpen) requests were open at once")

            let outOfOrder = Self.tasksOutOfOrder(arrivals: arrivals, events: events)
            #expect(outOfOrder.isEmpty, "events first arrived out of sequence order: \(outOfOrder.prefix(5))")

            Measurements.report("webhook-takeover", [
                "events": String(events.count), "arrivals": String(arrivals.count), "duplicates": String(duplicates),
                "leasedByKilled": String(orphaned), "pendingAtKill": String(pendingBeforeKill),
                "arrivedBeforeKill": String(arrivalsBeforeKill), "killToDrained": Measurements.seconds(drained),
                "mostOpenAtReceiver": String(receiver.mostOpen),
            ])
        }
    }

    /// Tasks whose events did not first arrive in sequence order, with those sequences. A
    /// delivery sent again shows only as a repeat, not as disorder: each event counts at its
    /// first arrival.
    static func tasksOutOfOrder(arrivals: [String], events: [LoggedEvent]) -> [String: [Int64]] {
        let byID = Dictionary(uniqueKeysWithValues: events.map { ($0.id, $0) })
        var seen = Set<String>()
        var firstArrivals: [String: [Int64]] = [:]
        for id in arrivals where seen.insert(id).inserted {
            guard let event = byID[id], let taskID = event.taskID else { continue }
            firstArrivals[taskID, default: []].append(event.sequence)
        }
        return firstArrivals.filter { _, sequences in zip(sequences, sequences.dropFirst()).contains { $0 >= $1 } }
    }
}
