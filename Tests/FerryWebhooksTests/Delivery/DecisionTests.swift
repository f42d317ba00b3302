import FerryCore
@testable import FerryStore
import FerryTestSupport
import Foundation
import Postgres
import Testing

@testable import FerryWebhooks

@Suite("Decisions: the receiver's reply or URLSession's default")
struct DecisionTests {
    private let password = "hunter2-\(UInt32.random(in: 0...UInt32.max))"

    /// A session with a delegate, a task, and a decision event (after `didCreateTask` was delivered).
    private func arrange(_ ferry: WebhookHarness, _ receiver: Receiver, events: Set<EventType>? = nil) async throws -> (task: TaskRecord, eventID: String) {
        let (session, _) = try await ferry.makeSession(delegateURL: receiver.url, events: events)
        let task = try await ferry.makeTask(in: session)
        if events == nil { try await receiver.wait { $0.sequences(ofTask: task.id) == [1] } }
        let eventID = try await ferry.emit(.taskDidReceiveChallenge, task: task, data: [
            "challenge": ["protectionSpace": ["authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"]],
        ])
        return (task, eventID)
    }

    /// Who decided the event, once recorded: a decision's record follows its reply (the transfer
    /// goes on first), so this waits a little for it unless `waits` is false.
    private func decidedBy(_ ferry: WebhookHarness, _ eventID: String, waits: Bool = true) async throws -> String? {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let decidedBy = try await ferry.pool.withConnection { connection in
                try connection.query("SELECT \(EventRecord.decidedBySQL) FROM events e WHERE e.id = $1", [eventID])[0].decode(0, as: String?.self)
            }
            if decidedBy != nil || !waits || ContinuousClock.now >= deadline { return decidedBy }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private func delivery(_ ferry: WebhookHarness, event eventID: String) async throws -> WebhookDeliveryRecord? {
        try await ferry.database.webhooks.deliveries(tenantID: ferry.tenant.id, filter: .init(), limit: 1000, after: nil)
            .items.first { $0.eventID == eventID }
    }

    /// Rows anywhere in the database whose text contains `needle`.
    private func occurrences(of needle: String, in ferry: WebhookHarness) async throws -> Int {
        try await ferry.pool.withConnection { connection in
            let tables = try connection.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").map { try $0.decode(0, as: String.self) }
            var count = 0
            for table in tables {
                // Table names come from the catalogue, not from a test input.
                count += try connection.query("SELECT count(*) FROM \"\(table)\" t WHERE strpos(t::text, $1) > 0", [needle])[0].decode(0, as: Int.self)
            }
            return count
        }
    }

    @Test("a 2xx JSON object is the decision; the reply and its credentials are never stored")
    func receiverDecides() async throws {
        let receiver = try Receiver()
        let password = self.password
        try await WebhookHarness.run { ferry in
            receiver.answer { request in
                guard (try? JSONValue.parse(request.body))?["type"] == "task.didReceiveChallenge" else {
                    return .json(#"{"received": true}"#)
                }
                return .json(#"{"disposition": "useCredential", "credential": {"user": "ferry", "password": "\#(password)"}}"#)
            }
            let (task, eventID) = try await arrange(ferry, receiver)
            let service = try #require(ferry.service)
            let reply = try #require(await service.decide(eventID: eventID, taskID: task.id, timeout: .seconds(5)))
            #expect(reply["disposition"] == "useCredential")
            #expect(reply["credential"]?["password"]?.stringValue == password)
            #expect(try await decidedBy(ferry, eventID) == "receiver")
            // Recorded on the delivery, not written into the wide event row (migration 0020);
            // the task's event log shows it all the same.
            let onTheEvent = try await ferry.value("SELECT decided_by FROM events WHERE id = $1", [eventID], as: String?.self)
            #expect(onTheEvent == nil)
            try await ferry.withAPI { api in
                let events = try await api.get("/v1/tasks/\(task.id)/events").json["data"]?.arrayValue ?? []
                #expect(events.first { $0["id"]?.stringValue == eventID }?["decidedBy"] == "receiver")
                #expect(events.filter { $0["decidedBy"] != .null }.count == 1)
            }
            let recorded = try #require(try await delivery(ferry, event: eventID))
            #expect(recorded.status == .delivered)
            #expect(recorded.isDecision)
            #expect(recorded.attempts.count == 1)
            #expect(recorded.attempts[0].responseExcerpt == nil)
            #expect(try await occurrences(of: password, in: ferry) == 0)
            // Sent once, directly: the queue never sends it again.
            try await Task.sleep(for: .milliseconds(300))
            #expect(receiver.requests.filter { $0.header("webhook-id") == eventID }.count == 1)
        }
    }

    @Test("a late reply means the default, within the timeout")
    func lateReplyTakesTheDefault() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (task, eventID) = try await arrange(ferry, receiver)
            receiver.answer { _ in Receiver.Reply(status: 200, body: Array(#"{"disposition": "useCredential"}"#.utf8), delay: 8) }
            let started = ContinuousClock.now
            let reply = await ferry.service?.decide(eventID: eventID, taskID: task.id, timeout: .milliseconds(500))
            #expect(reply == nil)
            // Long before the receiver's answer (with room for a loaded test machine).
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(try await decidedBy(ferry, eventID) == "default")
            let recorded = try #require(try await delivery(ferry, event: eventID))
            #expect(recorded.status == .failed)
            #expect(recorded.lastError?.contains("the default applied") == true)
        }
    }

    @Test("a 500 or a malformed reply means the default", arguments: [
        Receiver.Reply.json(#"{"disposition": "useCredential"}"#, status: 500),
        Receiver.Reply.json(#"{"disposition": "#),
        Receiver.Reply.json(#"["useCredential"]"#),
        Receiver.Reply.status(204),
    ])
    func badRepliesTakeTheDefault(reply: Receiver.Reply) async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (task, eventID) = try await arrange(ferry, receiver)
            receiver.answer { _ in reply }
            #expect(await ferry.service?.decide(eventID: eventID, taskID: task.id, timeout: .seconds(3)) == nil)
            #expect(try await decidedBy(ferry, eventID) == "default")
            #expect(receiver.requests.filter { $0.header("webhook-id") == eventID }.count == 1)
        }
    }

    @Test("an event the delegate did not subscribe to takes the default without a call")
    func unsubscribedTakesTheDefault() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (task, eventID) = try await arrange(ferry, receiver, events: [.taskDidCompleteWithError])
            let service = try #require(ferry.service)
            #expect(await service.decide(eventID: eventID, taskID: task.id, timeout: .seconds(2)) == nil)
            #expect(try await decidedBy(ferry, eventID) == "default")
            try await Task.sleep(for: .milliseconds(200))
            #expect(receiver.requests.isEmpty)
        }
    }

    @Test("a decision waits for the task's earlier deliveries")
    func decisionWaitsForEarlierEvents() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            receiver.answer { request in
                let body = try? JSONValue.parse(request.body)
                return body?["type"] == "task.isWaitingForConnectivity"
                    ? Receiver.Reply(delay: 0.3)
                    : .json(#"{"disposition": "performDefaultHandling"}"#)
            }
            let task = try await ferry.makeTask(in: session)
            try await ferry.emit(.taskIsWaitingForConnectivity, task: task)
            let eventID = try await ferry.emit(.taskWillPerformHTTPRedirection, task: task, data: ["newRequest": ["url": "https://elsewhere.example/"]])
            let reply = await ferry.service?.decide(eventID: eventID, taskID: task.id, timeout: .seconds(5))
            #expect(reply?["disposition"] == "performDefaultHandling")
            #expect(receiver.sequences(ofTask: task.id) == [1, 2, 3])
        }
    }

    @Test("a decision nobody decided is sent by the queue after the grace period")
    func undecidedDecisionIsSentLater() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run(configure: { $0.decisionGrace = .seconds(1) }) { ferry in
            let (task, eventID) = try await arrange(ferry, receiver)
            try await Task.sleep(for: .milliseconds(500))
            #expect(receiver.requests.filter { $0.header("webhook-id") == eventID }.isEmpty)
            #expect(try await receiver.wait(timeout: .seconds(5)) { $0.sequences(ofTask: task.id) == [1, 2] })
            #expect(try await decidedBy(ferry, eventID, waits: false) == nil)
        }
    }
}

extension WebhookService {
    /// A decision event already in the log, its delivery (and those of the task's earlier events)
    /// made and claimed in a transaction of its own (the engine does both in the one that writes
    /// the event), then decided; every 2xx JSON object reply is honoured.
    func decide(eventID: String, taskID: String, timeout: Duration) async -> JSONValue? {
        let terms = claimTerms(timeout: timeout)
        let claim = try? await ledger.pool.withTransaction { connection in
            let delegates = try connection.query(
                """
                SELECT coalesce(t.delegate_endpoint_id, s.delegate_endpoint_id) FROM tasks t JOIN sessions s ON s.id = t.session_id
                WHERE t.id = $1
                """,
                [taskID]
            ).compactMap { try $0.decode(0, as: String?.self) }.map { (taskID: taskID, endpointID: $0) }
            let asked = [AskedDecision(eventID: eventID, taskID: taskID)]
            return try WebhookLedger.writeDeliveries(for: delegates, asking: asked, terms: terms, on: connection).claims[eventID]
        }
        return await decide(claim ?? nil, timeout: timeout, honouring: { _ in nil })
    }
}
