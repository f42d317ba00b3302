import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@Suite("A delegate's maximumInFlight holds across instances")
struct InFlightLimitTests {
    @Test("two instances never have more requests open to an endpoint than its delegate allows")
    func limitHoldsAcrossInstances() async throws {
        let open = OpenRequests()
        let receiver = try open.receiver(holdingEachFor: 0.2)
        try await WebhookHarness.run { ferry in
            _ = try await ferry.startAnother(instanceID: "hooks-test-b")
            let secret = WebhookHarness.newSecret()
            let session = try await ferry.database.sessions.create(
                tenantID: ferry.tenant.id,
                SessionCreation(
                    configuration: SessionConfiguration(kind: .default),
                    delegate: DelegateSpec(url: receiver.url, secret: secret, maximumInFlight: 3)
                )
            ).session
            // One event (task.didCreateTask) per task: twelve independent streams.
            let tasks = try await (0..<12).asyncMap { _ in try await ferry.makeTask(in: session) }
            #expect(try await receiver.wait(timeout: .seconds(20)) { receiver in
                tasks.allSatisfy { receiver.sequences(ofTask: $0.id) == [1] }
            })
            let most = open.most
            #expect(most <= 3, "\(most) requests were open at once")
            #expect(most == 3, "the endpoint never had its share: \(most)")
        }
    }

    @Test("a run of a task's events that outlasts its lease is given back, not sent twice or two at once")
    func runOutlastingItsLease() async throws {
        let open = OpenRequests()
        let receiver = try open.receiver(holdingEachFor: 0.3)
        // Leases of 3 s and a slow receiver: a run of twelve takes 3.6 s to send. A slot that
        // kept sending once its leases ended shared the stream with the claim that took it up.
        try await WebhookHarness.run(configure: { $0.leaseDuration = .seconds(3); $0.requestTimeout = .seconds(1) }) { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            for _ in 0..<12 { try await ferry.emit(.downloadTaskDidWriteData, task: task) }
            #expect(try await receiver.wait(timeout: .seconds(30)) { $0.sequences(ofTask: task.id).count >= 13 })
            try await Task.sleep(for: .seconds(1))
            #expect(receiver.sequences(ofTask: task.id) == Array(1...13), "in order")
            #expect(receiver.accepted.count == 13, "each event sent once")
            #expect(open.most == 1, "requests of one task open at once")
        }
    }
}

/// How many requests a receiver has open at once, and the most it had.
private final class OpenRequests: Sendable {
    private let counts = Mutex((now: 0, most: 0))

    var most: Int { counts.withLock { $0.most } }

    /// A receiver that holds each request `seconds` before it answers 200.
    func receiver(holdingEachFor seconds: TimeInterval) throws -> Receiver {
        try Receiver { [self] _ in
            counts.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            Thread.sleep(forTimeInterval: seconds)
            counts.withLock { $0.now -= 1 }
            return .ok
        }
    }
}
