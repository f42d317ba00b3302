import Foundation
import Testing

@Suite("The README walkthrough against a real ferry serve")
struct WalkthroughTests {
    @Test("operator creates a tenant; the tenant downloads a file and gets it byte-exact")
    func walkthrough() async throws {
        let origin = try RecordingOrigin(size: 3 * 1024 * 1024 + 17)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let ferry = try await testbed.start("walkthrough")
            let probe = FerryClient(baseURL: ferry.baseURL, token: nil)
            #expect(try await probe.health() == 200)
            let readiness = try await probe.readiness()
            #expect(readiness.status == 200)
            #expect(readiness.readiness?.workersRunning == true)
            #expect(readiness.readiness?.migrationsApplied == true)

            let (tenant, client) = try await testbed.makeTenant(on: ferry, name: "acme")
            #expect(tenant.id.hasPrefix("ten_"))
            #expect(tenant.apiKey?.hasPrefix("fy_live_") == true)

            let (session, status) = try await client.createSession(["kind": "default"])
            #expect(status == 201)
            #expect(session.id.hasPrefix("ses_"))

            let created = try await client.createDownload(in: session.id, url: origin.url)
            #expect(created.id.hasPrefix("tsk_"))
            #expect(created.state == "running" || created.state == "completed")

            let task = try await client.task(created.id, wait: 60)
            #expect(task.state == "completed")
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200)
            #expect(task.countOfBytesReceived == Int64(origin.body.count))
            let file = try await client.file(of: task.id)
            #expect(file == Data(origin.body), "the downloaded file differs from what the origin served")
            #expect(origin.arrivals.count == 1)
        }
    }

    @Test("without resume a task is created suspended, and POST resume starts it")
    func suspendedUntilResumed() async throws {
        let origin = try RecordingOrigin(size: 100_000)
        defer { origin.stop() }
        try await Testbed.run { testbed in
            let ferry = try await testbed.start("suspended")
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession(["kind": "default"]).session

            let created = try await client.createDownload(in: session.id, url: origin.url, resume: false)
            #expect(created.state == "suspended")
            try await Task.sleep(for: .milliseconds(500))
            #expect(origin.arrivals.isEmpty, "a suspended task reached the origin")

            // The README starts it with `curl -X POST …/resume` and no body (an empty body was
            // once read as JSON null and refused with 400).
            let resumed = try await client.send("POST", "/v1/tasks/\(created.id)/resume")
            #expect(resumed.status == 200, "POST resume without a body: \(resumed.status) \(resumed.text)")
            let task = try await client.completion(of: created.id, timeout: .seconds(20))
            #expect(task.state == "completed")
            #expect(task.error == nil)
            #expect(try await client.file(of: task.id) == Data(origin.body))
        }
    }
}
