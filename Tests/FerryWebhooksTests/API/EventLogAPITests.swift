import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("The event log through the API")
struct EventLogAPITests {
    @Test("a task's events in sequence order, page by page; a session's by position")
    func taskAndSessionEvents() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (session, _) = try await ferry.makeSession()
            let task = try await ferry.makeTask(in: session)
            let other = try await ferry.makeTask(in: session)
            for _ in 0..<4 { try await ferry.emit(.downloadTaskDidWriteData, task: task, data: ["totalBytesWritten": 10]) }
            let decision = try await ferry.emit(.taskWillPerformHTTPRedirection, task: task)
            _ = try await ferry.pool.withConnection { connection in
                try connection.execute("UPDATE events SET decided_by = 'default' WHERE id = $1", [decision])
            }
            try await ferry.withAPI { api in
                let first = try await api.get("/v1/tasks/\(task.id)/events?limit=4")
                #expect(first.status == 200)
                #expect(first.json["data"]?.arrayValue.map { $0["sequence"] } == [1, 2, 3, 4])
                #expect(first.json["nextCursor"] == "4")
                let item = try #require(first.json["data"]?.arrayValue.last)
                #expect(item["type"] == "downloadTask.didWriteData")
                #expect(item["taskId"]?.stringValue == task.id)
                #expect(item["data"]?["totalBytesWritten"] == 10)
                #expect(item["data"]?["sequence"] == 4)
                #expect(item["timestamp"]?.stringValue.flatMap(ISO8601Parsing.date(from:)) != nil)
                #expect(item["decidedBy"] == .null)
                let rest = try await api.get("/v1/tasks/\(task.id)/events?after=4")
                #expect(rest.json["data"]?.arrayValue.map { $0["sequence"] } == [5, 6])
                #expect(rest.json["data"]?.arrayValue.last?["decidedBy"] == "default")
                #expect(rest.json["nextCursor"] == .null)

                let all = try await api.get("/v1/sessions/\(session.id)/events")
                let positions = all.json["data"]?.arrayValue.compactMap { $0["position"] } ?? []
                #expect(positions.count == 7)
                #expect(all.json["data"]?.arrayValue.filter { $0["taskId"]?.stringValue == other.id }.count == 1)
                let page = try await api.get("/v1/sessions/\(session.id)/events?limit=3")
                let cursor = try #require(page.json["nextCursor"]?.stringValue)
                #expect(page.json["data"]?.arrayValue.map { $0["position"] } == Array(positions.prefix(3)))
                let next = try await api.get("/v1/sessions/\(session.id)/events?after=\(cursor)")
                #expect(next.json["data"]?.arrayValue.map { $0["position"] } == Array(positions.dropFirst(3)))

                #expect(try await api.get("/v1/tasks/tsk_nope/events").status == 404)
                let bad = try await api.get("/v1/sessions/\(session.id)/events?after=yesterday")
                #expect(bad.status == 400)
                #expect(bad.json["field"] == "query.after")
            }
        }
    }

    @Test("positions are the tenant's own cursors: they do not count another tenant's events in between")
    func positionsHideOtherTenants() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (session, _) = try await ferry.makeSession()
            let task = try await ferry.makeTask(in: session)
            let (strangerTenant, _) = try await ferry.database.tenants.create(name: "stranger", quotas: TenantQuotas())
            let (strangerSession, _) = try await ferry.makeSession(tenantID: strangerTenant.id)
            let strangerTask = try await ferry.makeTask(in: strangerSession)
            for _ in 0..<50 { try await ferry.emit(.downloadTaskDidWriteData, task: strangerTask) }
            try await ferry.emit(.taskDidCompleteWithError, task: task)
            // The log's own positions count the stranger's 51 events.
            let logged = try await ferry.database.events.taskEvents(tenantID: ferry.tenant.id, taskID: task.id, after: nil, limit: 10).items
            #expect(logged.count == 2)
            #expect((logged.last?.position ?? 0) - (logged.first?.position ?? 0) > 50)
            try await ferry.withAPI { api in
                let shown = try await api.get("/v1/sessions/\(session.id)/events").json["data"]?.arrayValue.compactMap { $0["position"]?.wholeNumber } ?? []
                #expect(shown.count == 2)
                #expect(Set(shown).isDisjoint(with: logged.map(\.position)))
                let after = try await api.get("/v1/sessions/\(session.id)/events?after=\(shown.first ?? 0)")
                #expect(after.json["data"]?.arrayValue.compactMap { $0["position"]?.wholeNumber } == Array(shown.dropFirst()))
                // Numbers that were never cursors are refused: by the cursor's check bits, or (one in
                // 256 passes them) as past the end of the log.
                for madeUp in [(shown.first ?? 0) + 1, (shown.last ?? 0) + 1, 57] {
                    let answer = try await api.get("/v1/sessions/\(session.id)/events?after=\(madeUp)")
                    #expect(answer.status == 400)
                    #expect(answer.json["field"] == "query.after")
                }
                // A true cursor, but of a position past the end of the log (a list would answer
                // nothing, a stream would wait for good).
                let cursor = try await ferry.eventCursor()
                let pastTheEnd = try await api.get("/v1/sessions/\(session.id)/events?after=\(cursor.encode(EventCursor.maximumPosition))")
                #expect(pastTheEnd.status == 400)
                #expect(pastTheEnd.json["field"] == "query.after")
                // A session event too large for a webhook body: its stub's link leads to it.
                _ = try await ferry.pool.withConnection { connection in
                    try connection.execute(
                        """
                        INSERT INTO events (id, tenant_id, session_id, task_id, sequence, type, data)
                        VALUES ('evt_big', $1, $2, NULL, 1, 'session.didBecomeInvalidWithError', jsonb_build_object('blob', repeat('x', $3::int)))
                        """,
                        [ferry.tenant.id, session.id, EventRecord.maximumWebhookBodyBytes]
                    )
                }
                let logged = try await ferry.database.events.sessionEvents(tenantID: ferry.tenant.id, sessionID: session.id, after: nil, limit: 100)
                let big = try #require(logged.items.first { $0.id == "evt_big" })
                let stub = try JSONValue.parse(big.webhookBody(cursor: cursor))
                let link = try #require(stub["data"]?["event"]?.stringValue)
                #expect(try await api.get(link).json["data"]?.arrayValue.map { $0["id"] } == ["evt_big"])
            }
        }
    }

    @Test("another tenant reads none of it")
    func otherTenants() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (session, _) = try await ferry.makeSession()
            let task = try await ferry.makeTask(in: session)
            let (_, strangerKey) = try await ferry.database.tenants.create(name: "stranger", quotas: TenantQuotas())
            try await ferry.withAPI { api in
                let stranger = api.with(apiKey: strangerKey)
                let taskEvents = try await stranger.get("/v1/tasks/\(task.id)/events")
                #expect(taskEvents.status == 404)
                #expect(try await stranger.get("/v1/sessions/\(session.id)/events").status == 404)
                let stream = try await stranger.get("/v1/events/stream?sessionId=\(session.id)")
                #expect(stream.status == 404)
                #expect(stream.json["field"] == "query.sessionId", "the 404 names the parameter")
                #expect(try await api.get("/v1/tasks/\(task.id)/events").json["data"]?.arrayCount == 1)
            }
        }
    }

    @Test("the event stream replays from Last-Event-ID, then follows new events live, each as its webhook body")
    func eventStream() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (session, _) = try await ferry.makeSession()
            let task = try await ferry.makeTask(in: session)
            for _ in 0..<3 { try await ferry.emit(.downloadTaskDidWriteData, task: task) }
            let (strangerTenant, strangerKey) = try await ferry.database.tenants.create(name: "stranger", quotas: TenantQuotas())
            let (strangerSession, _) = try await ferry.makeSession(tenantID: strangerTenant.id)
            let events = try await ferry.database.events.taskEvents(tenantID: ferry.tenant.id, taskID: task.id, after: nil, limit: 100).items
            #expect(events.count == 4)
            try await ferry.withAPI(live: true) { api in
                let port = try #require(api.http.port)
                let positions = try await api.get("/v1/tasks/\(task.id)/events").json["data"]?.arrayValue.compactMap { $0["position"]?.wholeNumber }
                #expect(positions?.count == 4)
                let position = try #require(positions).map(String.init)
                // As EventSource reconnects: to the URL it opened (with `?after=`), with the last
                // id it saw, which wins.
                let stream = try SSEClient(port: port, path: "/v1/events/stream?after=\(position[0])", headers: [
                    ("Authorization", "Bearer \(ferry.apiKey)"), ("Last-Event-ID", position[1]),
                ])
                defer { stream.disconnect() }
                #expect(try await stream.wait { $0.events.count >= 2 })
                #expect(stream.status == 200)
                #expect(stream.contentType == "text/event-stream")
                #expect(stream.events.map(\.id) == [position[2], position[3]])
                #expect(stream.events.map(\.type) == ["downloadTask.didWriteData", "downloadTask.didWriteData"])
                let cursor = try await ferry.eventCursor()
                #expect(stream.events[0].data == String(decoding: events[2].webhookBody(cursor: cursor), as: UTF8.self))

                // Live: a new event, and another tenant's event that must not appear.
                let strangerTask = try await ferry.makeTask(in: strangerSession)
                try await ferry.emit(.taskDidCompleteWithError, task: strangerTask)
                try await ferry.emit(.taskDidCompleteWithError, task: task)
                #expect(try await stream.wait { $0.events.count >= 3 })
                try await Task.sleep(for: .milliseconds(200))
                #expect(stream.events.count == 3)
                #expect(stream.events.last?.type == "task.didCompleteWithError")
                let body = try JSONValue.parse(Array((stream.events.last?.data ?? "").utf8))
                #expect(body["data"]?["taskId"]?.stringValue == task.id)
                #expect(body["data"]?["sequence"] == 5)

                // A Last-Event-ID that was never one of the tenant's positions.
                var lastEventID = HTTPFields()
                lastEventID[try #require(HTTPField.Name("Last-Event-ID"))] = String((Int64(position[3]) ?? 0) + 1)
                let madeUp = try await api.get("/v1/events/stream", headers: lastEventID)
                #expect(madeUp.status == 400)
                #expect(madeUp.json["field"] == "Last-Event-ID")

                // Without Last-Event-ID the stream starts at the end of the log.
                let fresh = try SSEClient(port: port, path: "/v1/events/stream", headers: [("Authorization", "Bearer \(strangerKey)")])
                defer { fresh.disconnect() }
                #expect(try await fresh.wait { $0.status != nil })
                #expect(fresh.status == 200)
                #expect(fresh.events.isEmpty)
                try await ferry.emit(.taskDidCompleteWithError, task: strangerTask)
                #expect(try await fresh.wait { $0.events.count == 1 })
                #expect(fresh.events.first?.data.contains(strangerTask.id) == true)
            }
        }
    }

    @Test("an open stream ends once its key is revoked or its tenant suspended, before the next event", .timeLimit(.minutes(1)))
    func streamEndsWhenItsKeyNoLongerAdmits() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (session, _) = try await ferry.makeSession()
            let task = try await ferry.makeTask(in: session)
            let tenants = ferry.database.tenants
            try await ferry.withAPI(live: true, eventStreamAccessCheckInterval: .milliseconds(200)) { api in
                let port = try #require(api.http.port)
                func open(_ key: String) async throws -> SSEClient {
                    let stream = try SSEClient(port: port, path: "/v1/events/stream", headers: [("Authorization", "Bearer \(key)")])
                    #expect(try await stream.wait { $0.status == 200 })
                    return stream
                }
                // A second key, revoked while its stream is open; the first key's stream goes on.
                let (second, secondKey) = try await tenants.addKey(tenantID: ferry.tenant.id)
                let kept = try await open(ferry.apiKey)
                let revoked = try await open(secondKey)
                defer { kept.disconnect(); revoked.disconnect() }
                try await tenants.revokeKey(tenantID: ferry.tenant.id, keyID: second.id)
                #expect(try await revoked.wait { $0.isClosed })
                try await ferry.emit(.taskDidCompleteWithError, task: task)
                #expect(try await kept.wait { $0.events.count == 1 })
                #expect(revoked.events.isEmpty)

                // The tenant suspended: its streams end too.
                var suspension = TenantStore.Update()
                suspension.status = .suspended
                _ = try await tenants.update(id: ferry.tenant.id, suspension)
                #expect(try await kept.wait { $0.isClosed })
            }
        }
    }

    @Test("an open stream ends when Ferry shuts down", .timeLimit(.minutes(1)))
    func streamEndsOnShutdown() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let stream = try await ferry.withAPI(live: true) { api in
                let stream = try SSEClient(port: try #require(api.http.port), path: "/v1/events/stream", headers: [("Authorization", "Bearer \(ferry.apiKey)")])
                #expect(try await stream.wait { $0.status == 200 })
                return stream
            }
            // The application's graceful shutdown returned, so the stream let it: the client sees the end.
            #expect(try await stream.wait { $0.isClosed })
            stream.disconnect()
        }
    }
}
