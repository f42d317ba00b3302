import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWebhooks

/// The room an answered decision frees on a full endpoint goes to a stream waiting there, not to
/// a claim across every pending delivery: in bench/decisions.sh's data tasks (two decisions a
/// task, their endpoint full) a claim ran for nearly every decision, and most took nothing.
@Suite("An answered decision's room goes to a waiting stream")
struct DecisionRoomTests {
    static let waiting = 5

    @Test("streams waiting on a full endpoint follow an answered decision without another claim")
    func decisionHandsItsRoomOver() async throws {
        // The decision is answered after a second; everything else at once.
        let receiver = try Receiver { request in
            guard (try? JSONValue.parse(request.body))?["type"] == "task.didReceiveChallenge" else { return .ok }
            var reply = Receiver.Reply.json(#"{"disposition": "performDefaultHandling"}"#)
            reply.delay = 1
            return reply
        }
        // No idle poll within the test: only rings make the loop claim.
        try await WebhookHarness.run(configure: { $0.idlePollInterval = .seconds(60) }) { ferry in
            let service = try #require(ferry.service)
            // One request at a time to the endpoint: the decision fills it.
            let session = try await ferry.database.sessions.create(
                tenantID: ferry.tenant.id,
                SessionCreation(
                    configuration: SessionConfiguration(kind: .default),
                    delegate: DelegateSpec(url: receiver.url, secret: WebhookHarness.newSecret(), maximumInFlight: 1)
                )
            ).session
            let decisionTask = try await ferry.makeTask(in: session)
            #expect(try await receiver.wait { $0.sequences(ofTask: decisionTask.id) == [1] })
            let eventID = try await ferry.emit(.taskDidReceiveChallenge, task: decisionTask, data: [
                "challenge": ["protectionSpace": ["authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"]],
            ])
            async let reply = service.decide(eventID: eventID, taskID: decisionTask.id, timeout: .seconds(10))

            // While the decision is with the receiver, other tasks' events wait for the endpoint:
            // a claim finds it full and leaves them as candidates.
            try await Task.sleep(for: .milliseconds(100))
            let claimsBefore = service.claimsMade.load(ordering: .relaxed)
            let tasks = try await (0..<Self.waiting).asyncMap { _ in try await ferry.makeTask(in: session) }
            #expect(try await ferry.eventually {
                try await tasks.asyncMap { try await ferry.deliveries(ofTask: $0.id).count }.allSatisfy { $0 == 1 }
            })
            // A claim that sees all of them (the fan-out asks for none once the endpoint is
            // known to be full).
            service.callForClaim()
            #expect(try await ferry.eventually { service.claimsMade.load(ordering: .relaxed) > claimsBefore })
            try await Task.sleep(for: .milliseconds(200))
            #expect(receiver.accepted.count == 1, "only the decision task's first event is through")
            let claimsWhileFull = service.claimsMade.load(ordering: .relaxed)

            _ = await reply
            #expect(try await receiver.wait(timeout: .seconds(5)) { receiver in
                tasks.allSatisfy { receiver.sequences(ofTask: $0.id) == [1] }
            })
            // One slot took the room and went on to the other waiting streams; its end asks for
            // a claim once everything is through. The decision's end asked for another one first.
            try await Task.sleep(for: .milliseconds(300))
            let claims = service.claimsMade.load(ordering: .relaxed) - claimsWhileFull
            #expect(claims == 1, "claims after the decision was answered: \(claims)")
        }
    }
}
