import FerryAPI
import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// Event streams cannot drain the database pool: a tenant holds a bounded number, and an event
/// wakes only the streams of its tenant, which share one horizon read.
@Suite("Event streams under load")
struct EventStreamLoadTests {
    @Test("a tenant's streams beyond the bound are 429 problem+json; other tenants and closed slots are not affected")
    func streamsPerTenantAreBounded() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (_, strangerKey) = try await ferry.database.tenants.create(name: "stranger", quotas: TenantQuotas())
            try await ferry.withAPI(live: true, eventStreamsPerTenant: 2) { api in
                let port = try #require(api.http.port)
                let headers = [("Authorization", "Bearer \(ferry.apiKey)")]
                let first = try SSEClient(port: port, path: "/v1/events/stream", headers: headers)
                defer { first.disconnect() }
                let second = try SSEClient(port: port, path: "/v1/events/stream", headers: headers)
                defer { second.disconnect() }
                #expect(try await first.wait { $0.status == 200 })
                #expect(try await second.wait { $0.status == 200 })

                // Through a socket first: admitted, the stream would never end an ordinary request.
                let refused = try SSEClient(port: port, path: "/v1/events/stream", headers: headers)
                defer { refused.disconnect() }
                #expect(try await refused.wait { $0.status != nil })
                try #require(refused.status == 429, "a third stream of the tenant is refused")
                let third = try await api.get("/v1/events/stream")
                #expect(third.status == 429)
                #expect(third.headers[.contentType] == "application/problem+json")
                #expect(third.headers[.retryAfter] == "5")
                #expect(third.json["detail"]?.stringValue?.contains("at most 2 event streams") == true, "\(third.json)")

                let stranger = try SSEClient(port: port, path: "/v1/events/stream", headers: [("Authorization", "Bearer \(strangerKey)")])
                defer { stranger.disconnect() }
                #expect(try await stranger.wait { $0.status == 200 }, "another tenant has its own bound")

                // A closed stream gives its place back at once, with no event to write.
                first.disconnect()
                var admitted = false
                for _ in 0..<20 where !admitted {
                    let next = try SSEClient(port: port, path: "/v1/events/stream", headers: headers)
                    admitted = try await next.wait(timeout: .seconds(1)) { $0.status != nil } && next.status == 200
                    next.disconnect()
                    if !admitted { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(admitted, "a new stream is admitted once one closed")
            }
        }
    }

    @Test("another tenant's events wake no stream, and a tenant's streams share one horizon read per event")
    func wakingIsCheap() async throws {
        try await WebhookHarness.run(start: false) { ferry in
            let (busy, _) = try await ferry.database.tenants.create(name: "busy", quotas: TenantQuotas())
            let (busySession, _) = try await ferry.makeSession(tenantID: busy.id)
            let busyTask = try await ferry.makeTask(in: busySession)
            let (session, _) = try await ferry.makeSession()
            let task = try await ferry.makeTask(in: session)
            try await ferry.withAPI(live: true, eventStreamsPerTenant: 10) { api in
                let port = try #require(api.http.port)
                let streams = try (0..<10).map { _ in
                    try SSEClient(port: port, path: "/v1/events/stream", headers: [("Authorization", "Bearer \(ferry.apiKey)")])
                }
                defer { for stream in streams { stream.disconnect() } }
                for stream in streams { #expect(try await stream.wait { $0.status == 200 }) }
                try await Task.sleep(for: .milliseconds(300))
                let counter = try #require(api.eventStreams)

                // Ten events of another tenant: none of these streams has anything to read.
                let idleBefore = counter.databaseReads
                for _ in 0..<10 {
                    try await ferry.emit(.downloadTaskDidWriteData, task: busyTask)
                    try await Task.sleep(for: .milliseconds(50))
                }
                try await Task.sleep(for: .milliseconds(300))
                let idleReads = counter.databaseReads - idleBefore

                // Ten events of their own tenant: each stream reads its batch; the horizon is shared.
                let ownBefore = counter.databaseReads
                for _ in 0..<10 {
                    try await ferry.emit(.downloadTaskDidWriteData, task: task)
                    try await Task.sleep(for: .milliseconds(50))
                }
                for stream in streams { #expect(try await stream.wait { $0.events.count >= 10 }) }
                let ownReads = counter.databaseReads - ownBefore

                // A few shared horizon rounds while other transactions settle; streams that each
                // woke and advanced their own horizon would make 200.
                #expect(idleReads < 40, "\(idleReads) reads for events of another tenant")
                // Each stream advancing its own horizon is 2 reads per stream and event: 200.
                #expect(ownReads < 160, "\(ownReads) reads for 10 events × 10 streams")
            }
        }
    }
}
