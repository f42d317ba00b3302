import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWebhooks

@Suite("One endpoint's trouble is its own")
struct IsolationTests {
    @Test("a dead, slow endpoint does not delay another tenant's deliveries")
    func slowEndpointDoesNotDelayOthers() async throws {
        let slow = try Receiver { _ in Receiver.Reply(delay: 8) }
        let fast = try Receiver()
        // Fewer requests per endpoint than the slow endpoint has tasks, so that its share is full.
        let share = 4
        try await WebhookHarness.run(configure: {
            $0.requestTimeout = .seconds(10)
            $0.maximumInFlightPerEndpoint = share
        }) { ferry in
            let (other, _) = try await ferry.database.tenants.create(name: "neighbour", quotas: TenantQuotas())
            let (slowSession, _) = try await ferry.makeSession(delegateURL: slow.url)
            let (fastSession, _) = try await ferry.makeSession(delegateURL: fast.url, tenantID: other.id)
            let slowTasks = try await (0..<6).asyncMap { _ in try await ferry.makeTask(in: slowSession) }
            #expect(try await ferry.eventually { slow.requests.count == share }, "the slow endpoint gets its share at once")
            let fastTasks = try await (0..<6).asyncMap { _ in try await ferry.makeTask(in: fastSession) }
            for task in fastTasks { try await ferry.emit(.taskDidCompleteWithError, task: task) }
            #expect(try await fast.wait(timeout: .seconds(10)) { receiver in
                fastTasks.allSatisfy { receiver.sequences(ofTask: $0.id) == [1, 2] }
            })
            // Everything reached the healthy endpoint while the slow one had answered nothing yet.
            #expect(slow.accepted.isEmpty, "the healthy endpoint waited for the slow one")
            // The slow endpoint never had more requests open than its share.
            #expect(slow.requests.count == share)
            #expect(slowTasks.count > slow.requests.count)
            slow.origin.stop()
        }
    }

    @Test("a task's own delegate overrides its session's; session events stay with the session's")
    func taskDelegateOverridesSession() async throws {
        let sessionReceiver = try Receiver()
        let taskReceiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: sessionReceiver.url)
            let inherits = try await ferry.makeTask(in: session)
            let own = try await ferry.makeTask(in: session, delegateURL: taskReceiver.url)
            try await ferry.emit(.taskDidCompleteWithError, task: own)
            #expect(try await taskReceiver.wait { $0.sequences(ofTask: own.id) == [1, 2] })
            #expect(try await sessionReceiver.wait { $0.sequences(ofTask: inherits.id) == [1] })
            #expect(sessionReceiver.sequences(ofTask: own.id).isEmpty)
            #expect(taskReceiver.sequences(ofTask: inherits.id).isEmpty)
        }
    }

    @Test("an events filter sends only what it lists; without one, dataTask.didReceiveData is opt-in")
    func eventsFilter() async throws {
        let filtered = try Receiver()
        let everything = try Receiver()
        try await WebhookHarness.run { ferry in
            let (narrow, _) = try await ferry.makeSession(delegateURL: filtered.url, events: [.taskDidCompleteWithError])
            let (broad, _) = try await ferry.makeSession(delegateURL: everything.url)
            for session in [narrow, broad] {
                let task = try await ferry.makeTask(in: session)
                try await ferry.emit(.dataTaskDidReceiveData, task: task)
                try await ferry.emit(.taskDidCompleteWithError, task: task)
            }
            #expect(try await filtered.wait { $0.acceptedEvents.count == 1 })
            #expect(try await everything.wait { $0.acceptedEvents.count == 2 })
            try await Task.sleep(for: .milliseconds(200))
            #expect(filtered.acceptedEvents.map(\.type) == ["task.didCompleteWithError"])
            #expect(filtered.acceptedEvents.map(\.sequence) == [3])
            #expect(everything.acceptedEvents.map(\.type) == ["task.didCreateTask", "task.didCompleteWithError"])
        }
    }

    @Test("another tenant never sees endpoints, deliveries or events")
    func tenantsAreIsolated() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually { try await ferry.deliveries(ofTask: task.id).first?.status == .delivered })
            let (stranger, _) = try await ferry.database.tenants.create(name: "stranger", quotas: TenantQuotas())
            let delivery = try #require(try await ferry.deliveries(ofTask: task.id).first)
            let webhooks = ferry.database.webhooks
            let events = ferry.database.events
            #expect(try await webhooks.deliveries(tenantID: stranger.id, filter: .init(), limit: 100, after: nil).items.isEmpty)
            #expect(try await webhooks.deliveries(tenantID: stranger.id, filter: .init(taskID: task.id), limit: 100, after: nil).items.isEmpty)
            #expect(try await webhooks.endpoints(tenantID: stranger.id, limit: 100, after: nil).items.isEmpty)
            await #expect(throws: StoreError.notFound(resource: "webhook delivery")) {
                try await webhooks.delivery(tenantID: stranger.id, id: delivery.id)
            }
            await #expect(throws: StoreError.notFound(resource: "webhook delivery")) {
                try await webhooks.retry(tenantID: stranger.id, id: delivery.id)
            }
            await #expect(throws: StoreError.notFound(resource: "webhook endpoint")) {
                try await webhooks.enable(tenantID: stranger.id, id: delivery.endpointID)
            }
            await #expect(throws: StoreError.notFound(resource: "session")) {
                try await webhooks.delegate(tenantID: stranger.id, sessionID: session.id)
            }
            await #expect(throws: StoreError.notFound(resource: "task")) {
                try await events.taskEvents(tenantID: stranger.id, taskID: task.id, after: nil, limit: 100)
            }
            await #expect(throws: StoreError.notFound(resource: "session")) {
                try await events.sessionEvents(tenantID: stranger.id, sessionID: session.id, after: nil, limit: 100)
            }
            let horizon = try await events.safePosition()
            #expect(try await events.tenantEvents(tenantID: stranger.id, after: 0, upTo: horizon, limit: 100).isEmpty)
            #expect(try await events.tenantEvents(tenantID: ferry.tenant.id, after: 0, upTo: horizon, limit: 100).count == 1)
        }
    }
}
