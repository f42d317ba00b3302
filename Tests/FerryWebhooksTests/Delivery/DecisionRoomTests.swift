import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryWebhooks

/// The room an answered decision frees on a full endpoint goes to a stream waiting there, not to
/// a claim across every pending delivery (in bench/decisions.sh's data tasks, two decisions a
/// task and their endpoint full, a claim ran for nearly every decision and most took nothing);
/// and only while the endpoint is below its limit, since decisions are sent whatever the limit.
@Suite("An answered decision's room goes to a waiting stream, within the endpoint's limit")
struct DecisionRoomTests {
    static let waiting = 5

    /// A session whose delegate allows one request at a time.
    static func oneAtATime(_ ferry: WebhookHarness, _ receiver: Receiver) async throws -> SessionRecord {
        try await ferry.database.sessions.create(
            tenantID: ferry.tenant.id,
            SessionCreation(
                configuration: SessionConfiguration(kind: .default),
                delegate: DelegateSpec(url: receiver.url, secret: WebhookHarness.newSecret(), maximumInFlight: 1)
            )
        ).session
    }

    /// Waits until the event's delivery is leased (the decision's claim committed): from then on
    /// it fills its endpoint. A fixed pause was too short once on a loaded machine.
    static func isLeased(_ eventID: String, _ ferry: WebhookHarness) async throws -> Bool {
        try await ferry.eventually {
            try await ferry.pool.withConnection { connection in
                try connection.query(
                    "SELECT 1 FROM webhook_deliveries WHERE event_id = $1 AND lease_expires_at > now()", [eventID]
                ).isEmpty == false
            }
        }
    }

    static func emitDecision(_ ferry: WebhookHarness, task: TaskRecord) async throws -> String {
        try await ferry.emit(.taskDidReceiveChallenge, task: task, data: [
            "challenge": ["protectionSpace": ["authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"]],
        ])
    }

    /// Makes `count` tasks whose first events wait for the endpoint, and has a claim see them all
    /// (the fan-out asks for none once it knows the endpoint is full); answers the claims made
    /// by then.
    static func makeWaitingTasks(_ count: Int, in session: SessionRecord, _ ferry: WebhookHarness) async throws -> ([TaskRecord], Int) {
        let service = try #require(ferry.service)
        let tasks = try await (0..<count).asyncMap { _ in try await ferry.makeTask(in: session) }
        #expect(try await ferry.eventually {
            try await tasks.asyncMap { try await ferry.deliveries(ofTask: $0.id).count }.allSatisfy { $0 == 1 }
        })
        let before = service.claimsMade.load(ordering: .relaxed)
        service.callForClaim()
        #expect(try await ferry.eventually { service.claimsMade.load(ordering: .relaxed) > before })
        try await Task.sleep(for: .milliseconds(200))
        return (tasks, service.claimsMade.load(ordering: .relaxed))
    }

    @Test("streams waiting behind a decision on a full endpoint follow its answer without another claim")
    func decisionHandsItsRoomOver() async throws {
        // The decision is answered after five seconds (the waiting tasks are made meanwhile,
        // which took over three once on a loaded machine); everything else at once.
        let receiver = try Receiver { request in
            guard (try? JSONValue.parse(request.body))?["type"] == "task.didReceiveChallenge" else { return .ok }
            var reply = Receiver.Reply.json(#"{"disposition": "performDefaultHandling"}"#)
            reply.delay = 5
            return reply
        }
        // No idle poll within the test: only rings make the loop claim.
        try await WebhookHarness.run(configure: { $0.idlePollInterval = .seconds(60) }) { ferry in
            let service = try #require(ferry.service)
            let session = try await Self.oneAtATime(ferry, receiver)
            let decisionTask = try await ferry.makeTask(in: session)
            #expect(try await receiver.wait { $0.sequences(ofTask: decisionTask.id) == [1] })
            let eventID = try await Self.emitDecision(ferry, task: decisionTask)
            async let reply = service.decide(eventID: eventID, taskID: decisionTask.id, timeout: .seconds(10))
            #expect(try await Self.isLeased(eventID, ferry))

            // While the decision is with the receiver (it fills the endpoint), other tasks' events wait.
            let (tasks, claimsWhileFull) = try await Self.makeWaitingTasks(Self.waiting, in: session, ferry)
            #expect(receiver.accepted.count == 1, "only the decision task's first event is through")

            _ = await reply
            #expect(try await receiver.wait(timeout: .seconds(5)) { receiver in
                tasks.allSatisfy { receiver.sequences(ofTask: $0.id) == [1] }
            })
            // One slot took the room and went on to the other waiting streams; its end asks for
            // a claim once everything is through. (Before, the decision's end asked for one too.)
            try await Task.sleep(for: .milliseconds(300))
            let claims = service.claimsMade.load(ordering: .relaxed) - claimsWhileFull
            #expect(claims == 1, "claims after the decision was answered: \(claims)")
        }
    }

    @Test("an answered decision's room is not given away while the endpoint is still at its limit")
    func decisionOverTheLimitFreesNothing() async throws {
        // Ordinary events are held 1.2 s (within the harness's 2 s request timeout); the
        // decision is answered at once.
        let open = Mutex((now: 0, most: 0))
        let receiver = try Receiver { request in
            guard (try? JSONValue.parse(request.body))?["type"] != "task.didReceiveChallenge" else {
                return .json(#"{"disposition": "performDefaultHandling"}"#)
            }
            open.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            Thread.sleep(forTimeInterval: 1.2)
            open.withLock { $0.now -= 1 }
            return .ok
        }
        try await WebhookHarness.run(configure: { $0.idlePollInterval = .seconds(60) }) { ferry in
            let service = try #require(ferry.service)
            let session = try await Self.oneAtATime(ferry, receiver)
            let decisionTask = try await ferry.makeTask(in: session)
            #expect(try await receiver.wait { $0.sequences(ofTask: decisionTask.id) == [1] })
            // One ordinary delivery in flight fills the endpoint; others wait behind it.
            let slowTask = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually { open.withLock { $0.now } == 1 })
            let (tasks, _) = try await Self.makeWaitingTasks(3, in: session, ferry)

            // The decision goes out whatever the limit (two requests open); its answer frees no room.
            let eventID = try await Self.emitDecision(ferry, task: decisionTask)
            _ = await service.decide(eventID: eventID, taskID: decisionTask.id, timeout: .seconds(10))
            #expect(try await receiver.wait(timeout: .seconds(15)) { receiver in
                ([slowTask] + tasks).allSatisfy { receiver.sequences(ofTask: $0.id) == [1] }
            })
            let most = open.withLock { $0.most }
            #expect(most == 1, "ordinary requests open at once on a one-request endpoint: \(most)")
        }
    }
}
