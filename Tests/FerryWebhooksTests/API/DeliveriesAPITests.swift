import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Deliveries and endpoints through the API")
struct DeliveriesAPITests {
    @Test("list deliveries with their attempts, filter by status, retry one; see why an endpoint is disabled")
    func deliveriesAndEndpoints() async throws {
        let receiver = try Receiver { _ in .status(503) }
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            #expect(try await ferry.eventually { try await ferry.deliveries(ofTask: task.id).first?.status == .dead })
            let (_, strangerKey) = try await ferry.database.tenants.create(name: "stranger", quotas: TenantQuotas())
            try await ferry.withAPI { api in
                let dead = try await api.get("/v1/webhooks/deliveries?status=dead&taskId=\(task.id)")
                #expect(dead.status == 200)
                let delivery = try #require(dead.json["data"]?.arrayValue.first)
                #expect(delivery["status"] == "dead")
                #expect(delivery["attemptCount"] == 4)
                #expect(delivery["attempts"]?.arrayValue.map { $0["statusCode"] } == [503, 503, 503, 503])
                #expect(delivery["lastError"] == "answered 503")
                #expect(delivery["eventType"] == "task.didCreateTask")
                // The event's position as the event log shows it to the tenant (a cursor).
                let event = try await api.get("/v1/tasks/\(task.id)/events").json["data"]?.arrayValue.first
                #expect(delivery["eventPosition"] != nil)
                #expect(delivery["eventPosition"] == event?["position"])
                #expect(try await api.get("/v1/webhooks/deliveries?status=pending,delivered").json["data"] == [])
                let id = try #require(delivery["id"]?.stringValue)

                let stranger = api.with(apiKey: strangerKey)
                #expect(try await stranger.get("/v1/webhooks/deliveries/\(id)").status == 404)
                #expect(try await stranger.post("/v1/webhooks/deliveries/\(id)/retry").status == 404)
                #expect(try await stranger.get("/v1/webhooks/deliveries").json["data"] == [])

                receiver.answer { _ in .status(410) }
                let retried = try await api.post("/v1/webhooks/deliveries/\(id)/retry")
                #expect(retried.status == 200)
                #expect(retried.json["status"] == "pending")
                let endpointID = try #require(delivery["endpointId"]?.stringValue)
                #expect(try await ferry.eventually {
                    try await api.get("/v1/webhooks/endpoints/\(endpointID)").json["status"] == "disabled"
                })
                let endpoints = try await api.get("/v1/webhooks/endpoints")
                #expect(endpoints.json["data"]?.arrayValue.first?["disabledReason"] == "the endpoint answered 410 Gone")
                let waiting = try await api.get("/v1/webhooks/deliveries/\(id)")
                #expect(waiting.json["status"] == "pending")
                #expect(waiting.json["waitingReason"] == "endpoint disabled: the endpoint answered 410 Gone")
                #expect(try await api.post("/v1/webhooks/deliveries/\(id)/retry").status == 409)

                receiver.answer { _ in .ok }
                let enabled = try await api.post("/v1/webhooks/endpoints/\(endpointID)/enable")
                #expect(enabled.json["status"] == "active")
                #expect(try await ferry.eventually { try await api.get("/v1/webhooks/deliveries/\(id)").json["status"] == "delivered" })
                #expect(try await api.get("/v1/webhooks/deliveries/\(id)").json["attemptCount"] == 6)

                // A delivered one sent again: the attempt that delivered it first stays listed.
                receiver.answer { _ in .json(#"{"seen": true}"#) }
                #expect(try await api.post("/v1/webhooks/deliveries/\(id)/retry").status == 200)
                #expect(try await ferry.eventually { try await api.get("/v1/webhooks/deliveries/\(id)").json["attemptCount"] == 7 })
                let resent = try await api.get("/v1/webhooks/deliveries/\(id)").json
                #expect(resent["status"] == "delivered")
                let attempts = resent["attempts"]?.arrayValue ?? []
                #expect(attempts.map { $0["statusCode"] } == [503, 503, 503, 503, 410, 200, 200])
                #expect(attempts.suffix(2).map { $0["responseExcerpt"]?.stringValue } == [nil, #"{"seen": true}"#])
                #expect(try await api.get("/v1/webhooks/deliveries?status=bogus").status == 400)
            }
        }
    }

    @Test("a decision's reply is never recorded, also when the queue sends it (here, retried by the tenant)")
    func decisionRepliesStayUnrecorded() async throws {
        let receiver = try Receiver { _ in
            .json(#"{"disposition": "useCredential", "credential": {"user": "u", "password": "hunter2"}}"#)
        }
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            // Nobody waits for this decision: its delivery goes to the queue after the grace period.
            let eventID = try await ferry.emit(.taskDidReceiveChallenge, task: task)
            try await ferry.withAPI { api in
                let decision = { try await api.get("/v1/webhooks/deliveries?taskId=\(task.id)").json["data"]?.arrayValue.first { $0["eventId"]?.stringValue == eventID } }
                #expect(try await ferry.eventually { try await decision() != nil })
                let id = try #require(try await decision()?["id"]?.stringValue)
                #expect(try await api.post("/v1/webhooks/deliveries/\(id)/retry").status == 200)
                #expect(try await ferry.eventually { try await api.get("/v1/webhooks/deliveries/\(id)").json["status"] == "delivered" })
                let attempts = try await api.get("/v1/webhooks/deliveries/\(id)").json["attempts"]?.arrayValue ?? []
                #expect(attempts.count == 1)
                #expect(attempts.allSatisfy { $0["responseExcerpt"] == nil || $0["responseExcerpt"] == .null }, "\(attempts)")
            }
        }
    }
}
