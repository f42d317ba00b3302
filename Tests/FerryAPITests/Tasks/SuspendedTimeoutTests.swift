import FerryCore
import Testing
import TestOrigin

/// "A task, while suspended, produces no network traffic and is not subject to timeouts."
@Suite("timeoutIntervalForResource counts only the time a task is resumed", .sharedHarnesses)
struct SuspendedTimeoutTests {
    @Test("a download suspended for longer than its resource timeout finishes once resumed")
    func suspendedTimeDoesNotCount() async throws {
        let body = TestOrigin.pattern(count: 400_000, seed: 9)
        let origin = try TestOrigin { request, responder in
            // The first attempt trickles, so it is surely suspended mid-way; the resumption is fast.
            let rate = request.header("Range") == nil ? 100_000 : nil
            try responder.serveResource(body, for: request, etag: "\"strong-9\"", bytesPerSecond: rate)
        }
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession(["kind": "default", "timeoutIntervalForResource": 6])
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": .string(origin.url("/big"))], "resume": true])
            try await waitUntil(timeout: .seconds(5)) { try await tenant.task(task.id).countOfBytesReceived > 50_000 }
            _ = try await tenant.command(.suspend, task.id)

            // Longer than the whole resource timeout, spent suspended.
            try await Task.sleep(for: .seconds(8))
            #expect(try await tenant.task(task.id).state == "suspended", "a suspended task does not time out")

            _ = try await tenant.command(.resume, task.id)
            let done = try await tenant.task(task.id, wait: 20)
            #expect(done.state == "completed")
            #expect(done.error == nil, "resumed with time left: \(String(describing: done.error))")
            #expect(try await tenant.file(task.id).body == body)
        }
    }
}
