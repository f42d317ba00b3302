import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("Delegates through the API")
struct DelegateAPITests {
    @Test("a session's delegate: the secret is shown once, rotation answers the new one")
    func sessionDelegate() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            try await ferry.withAPI { api in
                let created = try await api.post("/v1/sessions", [
                    "configuration": ["kind": "default"],
                    "delegate": ["url": "https://hooks.example/ferry", "events": ["task.didCompleteWithError"]],
                ])
                #expect(created.status == 201)
                let delegate = try #require(created.json["delegate"])
                let secret = try #require(delegate["secret"]?.stringValue)
                #expect(try WebhookSecret.parse(secret).count == 32)
                #expect(delegate["url"] == "https://hooks.example/ferry")
                #expect(delegate["events"] == ["task.didCompleteWithError"])
                #expect(delegate["status"] == "active")
                let sessionID = try #require(created.json["id"]?.stringValue)

                let read = try await api.get("/v1/sessions/\(sessionID)/delegate")
                #expect(read.status == 200)
                #expect(read.json["id"] == delegate["id"])
                #expect(read.json["secret"] == nil)
                #expect(try await api.get("/v1/sessions/\(sessionID)").json["delegate"] == nil)

                let rotated = try await api.post("/v1/sessions/\(sessionID)/delegate/rotateSecret")
                #expect(rotated.status == 200)
                let newSecret = try #require(rotated.json["secret"]?.stringValue)
                #expect(newSecret != secret)
                let until = try #require(rotated.json["previousSecretExpiresAt"]?.stringValue.flatMap(ISO8601Parsing.date(from:)))
                #expect(abs(until.timeIntervalSinceNow - 86400) < 120)
                #expect(try await api.get("/v1/sessions/\(sessionID)/delegate").json["secret"] == nil)

                let chosen = "whsec_" + Data(repeating: 7, count: 40).base64EncodedString()
                let rotatedAgain = try await api.post("/v1/sessions/\(sessionID)/delegate/rotateSecret", ["secret": .string(chosen)])
                #expect(rotatedAgain.json["secret"]?.stringValue == chosen)
                // What signs now: the chosen secret and, until the overlap ends, the one before.
                let stored = try await ferry.value(
                    "SELECT secret || ' ' || previous_secret FROM webhook_endpoints WHERE id = $1",
                    [delegate["id"]?.stringValue ?? ""], as: String.self
                )
                #expect(stored == "\(chosen) \(newSecret)")
            }
        }
    }

    @Test("a chosen secret is kept and must be a valid whsec_ secret")
    func chosenSecrets() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            try await ferry.withAPI { api in
                let chosen = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
                let created = try await api.post("/v1/sessions", [
                    "configuration": ["kind": "default"], "delegate": ["url": "https://hooks.example/", "secret": .string(chosen)],
                ])
                #expect(created.status == 201)
                #expect(created.json["delegate"]?["secret"]?.stringValue == chosen)

                let short = try await api.post("/v1/sessions", [
                    "configuration": ["kind": "default"], "delegate": ["url": "https://hooks.example/", "secret": "whsec_c2hvcnQ="],
                ])
                #expect(short.status == 400)
                #expect(short.json["field"] == "delegate.secret")
                #expect(short.json["detail"]?.stringValue?.contains("c2hvcnQ") == false)
                #expect(try await ferry.value("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 1)

                let badRotation = try await api.post("/v1/sessions/\(created.json["id"]?.stringValue ?? "")/delegate/rotateSecret", ["secret": "nope"])
                #expect(badRotation.status == 400)
                #expect(badRotation.json["field"] == "secret")
            }
        }
    }

    @Test("a task's own delegate: shown once, not on an idempotent replay; rotating needs one of its own")
    func taskDelegate() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            try await ferry.withAPI { api in
                let session = try await api.post("/v1/sessions", ["configuration": ["kind": "default"]])
                let sessionID = try #require(session.json["id"]?.stringValue)
                let body: JSONValue = [
                    "kind": "download", "request": ["url": "https://origin.example/a"],
                    "delegate": ["url": "https://hooks.example/task"],
                ]
                let created = try await api.post("/v1/sessions/\(sessionID)/tasks", body, headers: [.init("Idempotency-Key")!: "once"])
                #expect(created.status == 201)
                #expect(created.json["delegate"]?["secret"]?.stringValue?.hasPrefix("whsec_") == true)
                let taskID = try #require(created.json["id"]?.stringValue)
                #expect(created.json["delegate"]?["taskId"]?.stringValue == taskID)

                let replay = try await api.post("/v1/sessions/\(sessionID)/tasks", body, headers: [.init("Idempotency-Key")!: "once"])
                #expect(replay.status == 200)
                #expect(replay.json["delegate"] == nil)
                #expect(try await ferry.value("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 1)

                #expect(try await api.get("/v1/tasks/\(taskID)/delegate").json["url"] == "https://hooks.example/task")
                #expect(try await api.post("/v1/tasks/\(taskID)/delegate/rotateSecret").status == 200)

                let plain = try await api.post("/v1/sessions/\(sessionID)/tasks", ["kind": "download", "request": ["url": "https://origin.example/b"]])
                let plainID = try #require(plain.json["id"]?.stringValue)
                #expect(plain.json["delegate"] == nil)
                #expect(try await api.get("/v1/tasks/\(plainID)/delegate").status == 404)
                #expect(try await api.post("/v1/tasks/\(plainID)/delegate/rotateSecret").status == 409)
                #expect(try await api.post("/v1/sessions/\(sessionID)/delegate/rotateSecret").status == 409)
            }
        }
    }

    @Test("another tenant's delegates are not found")
    func otherTenants() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (_, strangerKey) = try await ferry.database.tenants.create(name: "stranger", quotas: TenantQuotas())
            try await ferry.withAPI { api in
                let created = try await api.post("/v1/sessions", ["configuration": ["kind": "default"], "delegate": ["url": "https://hooks.example/"]])
                let sessionID = try #require(created.json["id"]?.stringValue)
                let endpointID = try #require(created.json["delegate"]?["id"]?.stringValue)
                let stranger = api.with(apiKey: strangerKey)
                #expect(try await stranger.get("/v1/sessions/\(sessionID)/delegate").status == 404)
                #expect(try await stranger.post("/v1/sessions/\(sessionID)/delegate/rotateSecret").status == 404)
                #expect(try await stranger.get("/v1/webhooks/endpoints/\(endpointID)").status == 404)
                #expect(try await stranger.post("/v1/webhooks/endpoints/\(endpointID)/enable").status == 404)
                #expect(try await stranger.get("/v1/webhooks/endpoints").json["data"] == [])
                #expect(try await api.get("/v1/webhooks/endpoints").json["data"]?.arrayCount == 1)
            }
        }
    }
}

extension JSONValue {
    var arrayCount: Int? {
        if case .array(let items) = self { return items.count }
        return nil
    }

    var arrayValue: [JSONValue] {
        if case .array(let items) = self { return items }
        return []
    }

    /// A number without a fraction (positions and counts: exact up to 2^53).
    var wholeNumber: Int64? {
        if case .number(let value) = self, value == value.rounded(), abs(value) < 0x1p53 { return Int64(value) }
        return nil
    }
}
