import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWebhooks

@Suite("Retries, Retry-After, redirects and giving up")
struct RetryTests {
    @Test("a 5xx and a timeout are retried with the same webhook-id until the endpoint answers")
    func retriesAfterServerErrorsAndTimeouts() async throws {
        let receiver = try Receiver()
        receiver.answer { _ in
            switch receiver.requests.count {
            case 1: .status(500)
            case 2: Receiver.Reply(delay: 2)  // longer than the 1 s timeout
            default: .ok
            }
        }
        try await WebhookHarness.run(configure: { $0.requestTimeout = .seconds(1) }) { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually { try await ferry.deliveries(ofTask: task.id).first?.status == .delivered })
            let delivery = try #require(try await ferry.deliveries(ofTask: task.id).first)
            #expect(delivery.attemptCount == 3)
            #expect(delivery.attempts.map(\.statusCode) == [500, nil, 200])
            #expect(delivery.attempts[0].error == "answered 500")
            #expect(delivery.attempts[1].error?.contains("no complete answer within 1000 ms") == true)
            #expect(delivery.attempts[2].error == nil)
            #expect(delivery.lastStatusCode == 200)
            #expect(delivery.deliveredAt != nil)
            let ids = Set(receiver.requests.map { $0.header("webhook-id") })
            #expect(ids == [delivery.eventID])
            // Attempts follow the schedule: at least 200 ms, then 400 ms apart.
            let gaps = zip(delivery.attempts.dropFirst(), delivery.attempts).map {
                $0.startedAt.timeIntervalSince($1.startedAt) - Double($1.durationMilliseconds) / 1000
            }
            #expect(gaps[0] >= 0.19 && gaps[1] >= 0.39, "\(gaps)")
        }
    }

    @Test("a longer Retry-After is honoured")
    func retryAfterIsHonoured() async throws {
        let receiver = try Receiver()
        receiver.answer { _ in receiver.requests.count == 1 ? .status(503, headers: [("Retry-After", "1")]) : .ok }
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually { try await ferry.deliveries(ofTask: task.id).first?.status == .delivered })
            let attempts = try #require(try await ferry.deliveries(ofTask: task.id).first?.attempts)
            #expect(attempts.count == 2)
            let gap = attempts[1].startedAt.timeIntervalSince(attempts[0].startedAt)
            #expect(gap >= 0.95, "retried after \(gap) s, not after Retry-After's 1 s")
        }
    }

    @Test("a 3xx is a failure and is never followed")
    func redirectsAreFailures() async throws {
        let receiver = try Receiver { request in
            request.path == "/hooks" ? .status(302, headers: [("Location", "/elsewhere")]) : .ok
        }
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually { (try await ferry.deliveries(ofTask: task.id).first?.attemptCount ?? 0) >= 2 })
            let delivery = try #require(try await ferry.deliveries(ofTask: task.id).first)
            #expect(delivery.status == .pending)
            #expect(delivery.lastStatusCode == 302)
            #expect(delivery.lastError == "answered 302; redirects are not followed")
            #expect(receiver.origin.requests(path: "/elsewhere").isEmpty)
        }
    }

    @Test("after the last retry a delivery is dead; a retry by hand sends it again")
    func deadAfterTheScheduleThenRetriedByHand() async throws {
        let receiver = try Receiver { _ in .json(#"{"error": "down for maintenance"}"#, status: 500) }
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually { try await ferry.deliveries(ofTask: task.id).first?.status == .dead })
            let dead = try #require(try await ferry.deliveries(ofTask: task.id).first)
            #expect(dead.attemptCount == 4)  // the first attempt and three retries
            #expect(dead.nextAttemptAt == nil)
            #expect(dead.attempts.last?.responseExcerpt == #"{"error": "down for maintenance"}"#)
            // A later event of the same task is not held back by a dead one.
            try await ferry.emit(.taskDidCompleteWithError, task: task)
            #expect(try await ferry.eventually { (try await ferry.deliveries(ofTask: task.id).last?.attemptCount ?? 0) >= 1 })

            receiver.answer { _ in .ok }
            let retried = try await ferry.database.webhooks.retry(tenantID: ferry.tenant.id, id: dead.id)
            #expect(retried.status == .pending)
            #expect(try await ferry.eventually { try await ferry.database.webhooks.delivery(tenantID: ferry.tenant.id, id: dead.id).status == .delivered })
            #expect(try await ferry.database.webhooks.delivery(tenantID: ferry.tenant.id, id: dead.id).attemptCount == 5)
        }
    }

    @Test("410 disables the endpoint; its deliveries wait, new events are not queued; enabling sends what waited")
    func goneDisablesTheEndpoint() async throws {
        let receiver = try Receiver { _ in .status(410) }
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            let endpointID = try #require(try await ferry.database.webhooks.delegate(tenantID: ferry.tenant.id, sessionID: session.id)?.id)
            #expect(try await ferry.eventually {
                try await ferry.database.webhooks.endpoint(tenantID: ferry.tenant.id, id: endpointID).status == .disabled
            })
            let endpoint = try await ferry.database.webhooks.endpoint(tenantID: ferry.tenant.id, id: endpointID)
            #expect(endpoint.disabledReason == "the endpoint answered 410 Gone")
            let waiting = try #require(try await ferry.deliveries(ofTask: task.id).first)
            #expect(waiting.status == .pending)
            #expect(waiting.waitingReason == "endpoint disabled: the endpoint answered 410 Gone")

            try await ferry.emit(.taskDidCompleteWithError, task: task)
            try await Task.sleep(for: .milliseconds(300))
            #expect(receiver.requests.count == 1)
            #expect(try await ferry.deliveries(ofTask: task.id).count == 1)

            receiver.answer { _ in .ok }
            let enabled = try await ferry.database.webhooks.enable(tenantID: ferry.tenant.id, id: endpointID)
            #expect(enabled.status == .active && enabled.disabledReason == nil)
            #expect(try await receiver.wait { $0.sequences(ofTask: task.id) == [1] })
            #expect(try await ferry.eventually { try await ferry.deliveries(ofTask: task.id).first?.status == .delivered })
        }
    }

    @Test("an endpoint that has failed for five days is disabled")
    func failingForDaysDisables() async throws {
        let receiver = try Receiver { _ in .status(500) }
        try await WebhookHarness.run(start: false) { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let endpointID = try #require(try await ferry.database.webhooks.delegate(tenantID: ferry.tenant.id, sessionID: session.id)?.id)
            _ = try await ferry.pool.withConnection { connection in
                try connection.execute("UPDATE webhook_endpoints SET failing_since = now() - interval '6 days' WHERE id = $1", [endpointID])
            }
            try await ferry.start()
            _ = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually {
                try await ferry.database.webhooks.endpoint(tenantID: ferry.tenant.id, id: endpointID).status == .disabled
            })
            let endpoint = try await ferry.database.webhooks.endpoint(tenantID: ferry.tenant.id, id: endpointID)
            #expect(endpoint.disabledReason?.hasPrefix("every delivery failed for 5 days") == true)
            #expect(receiver.requests.count == 1)
        }
    }

    @Test("the address policy guards webhook URLs like transfers")
    func refusedByTheAddressPolicy() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run(configure: { $0.addressPolicy = AddressPolicy(allowedNetworks: []) }) { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually { (try await ferry.deliveries(ofTask: task.id).first?.attemptCount ?? 0) >= 1 })
            let delivery = try #require(try await ferry.deliveries(ofTask: task.id).first)
            #expect(delivery.lastError == "refused by policy: the server's address is loopback and not in FERRY_ALLOW_NETWORKS")
            #expect(receiver.requests.isEmpty)
        }
    }
}
