import FerryCore
import FerryStore
import FerryTestSupport
import FerryWebhooks
import Foundation
import Testing
import TestOrigin

@Suite("Decision events pause transfers and take the receiver's answer")
struct EngineDecisionTests {
    /// A receiver that answers each decision type with the reply given for it (nil: no answer).
    final class Receiver: Sendable {
        let origin: TestOrigin

        init(replies: [String: String], delay: Double = 0) throws {
            origin = try TestOrigin { request, responder in
                let type = (try? JSONValue.parse(request.body))?["type"]?.stringValue ?? ""
                if delay > 0 { responder.pause(seconds: delay) }
                let reply = replies[type] ?? "{}"
                try responder.respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(reply.utf8))
            }
        }

        var url: String { origin.url("/hook") }
        func types() -> [String] { origin.requests.compactMap { (try? JSONValue.parse($0.body))?["type"]?.stringValue } }
    }

    static let webhooks = WebhookConfiguration(
        instanceID: "test-instance",
        addressPolicy: AddressPolicy(allowedNetworks: [try! CIDRBlock("127.0.0.0/8")])
    )

    private func session(
        _ ferry: EngineHarness, receiver: Receiver, events: Set<EventType>? = nil, kind: SessionKind = .default
    ) async throws -> SessionRecord {
        var configuration = SessionConfiguration(kind: kind)
        if kind == .background { configuration.identifier = "decisions" }
        return try await ferry.database.database.sessions.create(
            tenantID: ferry.tenant.id, SessionCreation(configuration: configuration, delegate: DelegateSpec(url: receiver.url, events: events))
        ).session
    }

    private func origin() throws -> TestOrigin {
        try TestOrigin(TestOrigin.routes([
            "/moved": { _, responder in
                try responder.respond(status: 302, headers: [("Location", "/target"), ("Content-Type", "text/plain")], body: Array("see /target".utf8))
            },
            "/target": { request, responder in try responder.serveResource(Array("target".utf8), for: request) },
            "/private": { _, responder in
                guard try responder.requireBasicAuth(user: "ada", password: "lovelace") else { return }
                try responder.respond(status: 200, body: Array("secret".utf8))
            },
            "/data": { request, responder in try responder.serveResource(TestOrigin.pattern(count: 300_000), for: request) },
        ]))
    }

    /// Who decided, once recorded (a decision's record follows its reply; this waits a little).
    private func decidedBy(_ ferry: EngineHarness, task: String, type: EventType) async throws -> String? {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let decidedBy = try await ferry.database.database.pool.withConnection { connection in
                try connection.query("SELECT \(EventRecord.decidedBySQL) FROM events e WHERE e.task_id = $1 AND e.type = $2", [task, type.rawValue]).first?.decode(0, as: String?.self) ?? nil
            }
            if decidedBy != nil || ContinuousClock.now >= deadline { return decidedBy }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("{request: null} stops at the redirect: its response and body are the task's")
    func stopAtRedirect() async throws {
        let origin = try origin()
        let receiver = try Receiver(replies: ["task.willPerformHTTPRedirection": #"{"request": null}"#])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/moved")).id)
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 302)
            #expect(try await ferry.responseBody(of: task.id) == Array("see /target".utf8))
            #expect(origin.requests(path: "/target").isEmpty)
            #expect(try await decidedBy(ferry, task: task.id, type: .taskWillPerformHTTPRedirection) == "receiver")
        }
    }

    @Test("a background session follows the redirect without asking: the event is sent, decided by the default")
    func backgroundSessionFollowsRedirects() async throws {
        let origin = try origin()
        let receiver = try Receiver(replies: ["task.willPerformHTTPRedirection": #"{"request": null}"#])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver, kind: .background)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .download, url: origin.url("/moved")).id)
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200)
            #expect(origin.requests(path: "/target").count == 1)
            #expect(try await decidedBy(ferry, task: task.id, type: .taskWillPerformHTTPRedirection) == "default")
        }
    }

    @Test("a reply that would send TRACE (or CONNECT) is refused: the default applies and the attempt says why", arguments: ["TRACE", "CONNECT"])
    func forbiddenMethodInReply(method: String) async throws {
        let origin = try origin()
        let receiver = try Receiver(replies: ["task.willPerformHTTPRedirection": #"{"request": {"httpMethod": "\#(method)"}}"#])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/moved")).id)
            #expect(task.response?.statusCode == 200)
            #expect(origin.requests(path: "/target").map(\.method) == ["GET"])
            #expect(try await decidedBy(ferry, task: task.id, type: .taskWillPerformHTTPRedirection) == "default")
            let deliveries = try await ferry.database.database.webhooks.deliveries(
                tenantID: ferry.tenant.id, filter: .init(taskID: task.id), limit: 100, after: nil
            ).items
            let redirect = try #require(deliveries.first { $0.eventType == EventType.taskWillPerformHTTPRedirection.rawValue })
            let errors = redirect.attempts.map(\.error)
            #expect(errors.count == 1)
            #expect(errors.first??.contains(method) == true)
        }
    }

    @Test("a receiver too slow to answer means the default: the redirect is followed")
    func lateAnswerIsDefault() async throws {
        let origin = try origin()
        let receiver = try Receiver(replies: ["task.willPerformHTTPRedirection": #"{"request": null}"#], delay: 3)
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks, configure: { $0.decisionTimeout = .seconds(1) }) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/moved")).id)
            #expect(task.response?.statusCode == 200)
            #expect(try await ferry.responseBody(of: task.id) == Array("target".utf8))
            #expect(try await decidedBy(ferry, task: task.id, type: .taskWillPerformHTTPRedirection) == "default")
        }
    }

    @Test("a Basic challenge answered from the reply's credential")
    func challengeAnswered() async throws {
        let origin = try origin()
        let receiver = try Receiver(replies: [
            "task.didReceiveChallenge": #"{"disposition": "useCredential", "credential": {"user": "ada", "password": "lovelace"}}"#,
        ])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/private")).id)
            #expect(task.response?.statusCode == 200)
            #expect(try await ferry.responseBody(of: task.id) == Array("secret".utf8))
            // The password is used, never stored.
            let stored = try await ferry.database.database.pool.withConnection { connection in
                try connection.query("SELECT count(*) FROM events WHERE data::text LIKE '%lovelace%'")[0].decode(0, as: Int.self)
            }
            #expect(stored == 0)
        }
    }

    @Test("didReceiveResponse: cancel ends with -999; becomeDownload turns the data task into a download")
    func responseDispositions() async throws {
        let origin = try origin()
        let cancelling = try Receiver(replies: ["dataTask.didReceiveResponse": #"{"disposition": "cancel"}"#])
        let converting = try Receiver(replies: ["dataTask.didReceiveResponse": #"{"disposition": "becomeDownload"}"#])
        defer { origin.stop(); cancelling.origin.stop(); converting.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let cancelled = try await ferry.completion(of: try await ferry.startTask(
                in: try await session(ferry, receiver: cancelling), kind: .data, url: origin.url("/data")
            ).id)
            #expect(cancelled.error?.code == -999)

            let converted = try await ferry.completion(of: try await ferry.startTask(
                in: try await session(ferry, receiver: converting), kind: .data, url: origin.url("/data")
            ).id)
            #expect(converted.error == nil)
            #expect(converted.kind == .download)
            #expect(try ferry.downloadedFile(of: converted.id) == TestOrigin.pattern(count: 300_000))
            #expect(try await ferry.eventTypes(of: converted.id).contains("dataTask.didBecomeDownloadTask"))
        }
    }

    @Test("an earlier delivery waiting for its retry is not sent early by each decision: the decisions take their default")
    func earlierDeliveryBackingOff() async throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/r1": { _, responder in try responder.respond(status: 302, headers: [("Location", "/r2")], body: []) },
            "/r2": { _, responder in try responder.respond(status: 302, headers: [("Location", "/r3")], body: []) },
            "/r3": { _, responder in try responder.respond(status: 302, headers: [("Location", "/target")], body: []) },
            "/target": { request, responder in try responder.serveResource(Array("target".utf8), for: request) },
        ]))
        // Busy for anything but a decision, and says when to come back.
        let receiver = try TestOrigin { request, responder in
            let type = (try? JSONValue.parse(request.body))?["type"]?.stringValue ?? ""
            if type == EventType.taskWillPerformHTTPRedirection.rawValue {
                try responder.respond(status: 200, headers: [("Content-Type", "application/json")], body: Array("{}".utf8))
            } else {
                try responder.respond(status: 503, headers: [("Retry-After", "300")], body: [])
            }
        }
        defer { origin.stop(); receiver.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await ferry.database.database.sessions.create(
                tenantID: ferry.tenant.id,
                SessionCreation(configuration: SessionConfiguration(kind: .default), delegate: DelegateSpec(url: receiver.url("/hook"), events: nil))
            ).session
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/r1")).id)
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200, "the redirects were followed, by default")
            let attempts = try await ferry.database.database.pool.withConnection { connection in
                try connection.query(
                    "SELECT attempts FROM webhook_deliveries WHERE task_id = $1 AND event_type = $2", [task.id, EventType.taskDidCreateTask.rawValue]
                ).first?.decode(0, as: Int.self)
            }
            // One attempt (by the queue, or by the first decision), not one per redirect.
            #expect(attempts == 1)
        }
    }

    @Test("a decision's delivery is claimed by the transaction that writes its event, after the task's earlier events")
    func claimedWithTheEvent() async throws {
        let origin = try origin()
        let receiver = try Receiver(replies: ["dataTask.didReceiveResponse": #"{"disposition": "allow"}"#])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let task = try await ferry.completion(of: try await ferry.startTask(
                in: try await session(ferry, receiver: receiver), kind: .data, url: origin.url("/target")
            ).id)
            #expect(task.error == nil)
            #expect(try await decidedBy(ferry, task: task.id, type: .dataTaskDidReceiveResponse) == "receiver")
            // now() is the transaction's start: one transaction wrote the event and its delivery.
            let sameTransaction = try await ferry.database.database.pool.withConnection { connection in
                try connection.query(
                    """
                    SELECT d.created_at = e.created_at FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
                    WHERE e.task_id = $1 AND e.type = $2
                    """,
                    [task.id, EventType.dataTaskDidReceiveResponse.rawValue]
                ).first?.decode(0, as: Bool.self)
            }
            #expect(sameTransaction == true)
            // Per-task order: the task's first event reached the receiver before the decision.
            let types = receiver.types()
            let created = try #require(types.firstIndex(of: EventType.taskDidCreateTask.rawValue))
            let decision = try #require(types.firstIndex(of: EventType.dataTaskDidReceiveResponse.rawValue))
            #expect(created < decision)
        }
    }

    @Test(
        "a write whose decision claims fail is written without them: the default applies, and the queue sends the event later",
        .timeLimit(.minutes(1))  // retried with its claims for ever, the write would hold the engine's shutdown too
    )
    func failedClaimsDoNotHoldTheWriteUp() async throws {
        let origin = try origin()
        // Asked, the receiver would cancel the task; the default (allow) completes it.
        let receiver = try Receiver(replies: ["dataTask.didReceiveResponse": #"{"disposition": "cancel"}"#])
        defer { origin.stop(); receiver.origin.stop() }
        var webhooks = Self.webhooks
        webhooks.decisionGrace = .seconds(1)
        try await EngineHarness.run(webhooks: webhooks) { ferry in
            // Every claim of a decision's delivery fails; the fan-out's deliveries (unleased) do not.
            try await ferry.database.database.pool.withConnection { connection in
                try connection.executeScript(
                    """
                    CREATE FUNCTION refuse_decision_claims() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.is_decision AND NEW.lease_owner IS NOT NULL THEN RAISE EXCEPTION 'claims refused by the test'; END IF;
                        RETURN NEW;
                    END $$;
                    CREATE TRIGGER refuse_decision_claims BEFORE INSERT ON webhook_deliveries
                        FOR EACH ROW EXECUTE FUNCTION refuse_decision_claims();
                    """
                )
            }
            let task = try await ferry.completion(of: try await ferry.startTask(
                in: try await session(ferry, receiver: receiver), kind: .data, url: origin.url("/target")
            ).id)
            #expect(task.state == .completed)
            #expect(task.error == nil)
            #expect(try await ferry.responseBody(of: task.id) == Array("target".utf8))
            // The event is in the log all the same, and reaches the receiver from the queue.
            let deadline = ContinuousClock.now + .seconds(10)
            while !receiver.types().contains(EventType.dataTaskDidReceiveResponse.rawValue), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(receiver.types().contains(EventType.dataTaskDidReceiveResponse.rawValue))
            #expect(try await ferry.eventTypes(of: task.id).contains(EventType.dataTaskDidReceiveResponse.rawValue))
        }
    }

    @Test("a decision the delegate did not subscribe to takes the default without a call")
    func unsubscribed() async throws {
        let origin = try origin()
        let receiver = try Receiver(replies: ["task.willPerformHTTPRedirection": #"{"request": null}"#])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver, events: [.taskDidCompleteWithError])
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/moved")).id)
            #expect(task.response?.statusCode == 200)
            #expect(try await decidedBy(ferry, task: task.id, type: .taskWillPerformHTTPRedirection) == "default")
            try await Task.sleep(for: .seconds(1))
            #expect(!receiver.types().contains("task.willPerformHTTPRedirection"))
        }
    }

    private func deliveryError(_ ferry: EngineHarness, task: String, type: EventType) async throws -> String? {
        try await ferry.database.database.pool.withConnection { connection in
            try connection.query(
                "SELECT d.last_error FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.task_id = $1 AND e.type = $2",
                [task, type.rawValue]
            ).first?.decode(0, as: String?.self) ?? nil
        }
    }

    @Test("becomeStream, which Ferry does not offer, is a rejected reply: the default applies and the delivery says why")
    func becomeStreamIsRejected() async throws {
        let origin = try origin()
        let streaming = try Receiver(replies: ["dataTask.didReceiveResponse": #"{"disposition": "becomeStream"}"#])
        let unknown = try Receiver(replies: ["dataTask.didReceiveResponse": #"{"disposition": "becomeSomethingElse"}"#])
        defer { origin.stop(); streaming.origin.stop(); unknown.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let task = try await ferry.completion(of: try await ferry.startTask(
                in: try await session(ferry, receiver: streaming), kind: .data, url: origin.url("/data")
            ).id)
            // URLSession's default for didReceiveResponse: allow.
            #expect(task.error == nil)
            #expect(task.kind == .data)
            #expect(try await ferry.responseBody(of: task.id) == TestOrigin.pattern(count: 300_000))
            #expect(try await decidedBy(ferry, task: task.id, type: .dataTaskDidReceiveResponse) == "default")
            let why = try #require(try await deliveryError(ferry, task: task.id, type: .dataTaskDidReceiveResponse))
            #expect(why.contains("becomeStream") && why.contains("stream tasks"), "\(why)")

            let other = try await ferry.completion(of: try await ferry.startTask(
                in: try await session(ferry, receiver: unknown), kind: .data, url: origin.url("/data")
            ).id)
            #expect(other.error == nil)
            #expect(try await decidedBy(ferry, task: other.id, type: .dataTaskDidReceiveResponse) == "default")
            #expect(try await deliveryError(ferry, task: other.id, type: .dataTaskDidReceiveResponse)?.contains("rejected") == true)
        }
    }

    @Test("willBeginDelayedRequest: the reply the README documents, useNewRequest with a request, is followed")
    func delayedRequestUseNewRequest() async throws {
        let origin = try origin()
        let receiver = try Receiver(replies: [
            "task.willBeginDelayedRequest": #"{"disposition": "useNewRequest", "request": {"url": "\#(origin.url("/target"))"}}"#,
        ])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver)
            var creation = TaskCreation(kind: .data, request: TransferRequest(url: origin.url("/data")))
            creation.startsImmediately = true
            creation.earliestBeginDate = Date().addingTimeInterval(-1)
            let created = try await ferry.tasks.create(
                tenantID: ferry.tenant.id, sessionID: session.id, creation, request: creation.request!, host: "127.0.0.1", origin: .init()
            ).task
            let task = try await ferry.completion(of: created.id)
            #expect(task.error == nil)
            #expect(try await ferry.responseBody(of: task.id) == Array("target".utf8))
            #expect(origin.requests(path: "/data").isEmpty)
            #expect(try await decidedBy(ferry, task: task.id, type: .taskWillBeginDelayedRequest) == "receiver")
        }
    }

    @Test("didReceiveData carries the task's body only: not a challenge's, answered meanwhile from the session's credentials")
    func dataEventsSkipAnsweredChallenges() async throws {
        let body = TestOrigin.pattern(count: 50_000, seed: 7)
        let origin = try TestOrigin { request, responder in
            guard request.header("Authorization") != nil else {
                // Slow enough that heartbeats (200 ms) come while it arrives.
                let page = Array(String(repeating: "<p>401 Unauthorized</p>", count: 8_000).utf8)
                return try responder.respond(
                    status: 401, headers: [("WWW-Authenticate", "Basic realm=\"files\"")], body: page,
                    faults: BodyFaults(bytesPerSecond: 400_000)
                )
            }
            try responder.respond(status: 200, body: body)
        }
        let receiver = try Receiver(replies: [:])
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver, events: [.dataTaskDidReceiveData, .taskDidCompleteWithError])
            try await ferry.storeCredential(in: session, port: origin.port, realm: "files")
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/file")).id)
            #expect(task.response?.statusCode == 200)
            var received: [UInt8] = []
            for event in try await ferry.eventData(of: task.id, type: "dataTask.didReceiveData") {
                #expect(event["offset"] == .number(Double(received.count)), "data events out of place")
                received += Array(Data(base64Encoded: event["data"]?.stringValue ?? "") ?? Data())
            }
            #expect(received == body, "the data events carried \(received.count) bytes, not the body's \(body.count)")
        }
    }
}
