import FerryCore
import Testing
import TestOrigin

@Suite("GET /v1/tasks/{id}?wait= long-polls: it answers when the task completes, or after about wait seconds", .sharedHarnesses)
struct LongPollTests {
    @Test("a task that does not complete is answered after about wait seconds")
    func answersAfterWait() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": "http://example.com/a"]])

            let started = ContinuousClock.now
            let polled = try await tenant.task(task.id, wait: 1.5)
            let elapsed = ContinuousClock.now - started

            #expect(polled.state == "suspended")
            #expect(elapsed >= .milliseconds(1400), "\(elapsed)")
            #expect(elapsed < .seconds(4), "\(elapsed)")
        }
    }

    @Test("?wait=0 answers at once")
    func zeroWait() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": "http://example.com/a"]])

            let started = ContinuousClock.now
            #expect(try await tenant.task(task.id, wait: 0).state == "suspended")
            // At once: far below any wait (with room for a loaded test machine).
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }

    @Test("a task cancelled while a client waits wakes the long-poll at once")
    func wakesOnCancel() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": "http://example.com/a"]])

            let started = ContinuousClock.now
            async let polled = tenant.task(task.id, wait: 20)
            try await Task.sleep(for: .milliseconds(500))
            _ = try await tenant.command(.cancel, task.id)
            let answer = try await polled
            let elapsed = ContinuousClock.now - started

            #expect(answer.state == "completed")
            #expect(answer.error?.code == -999)
            // Generous: a loaded CI machine is slow, but nowhere near the 20 s deadline.
            #expect(elapsed < .seconds(12), "returned \(elapsed) after the request, not at the 20 s deadline")
        }
    }

    @Test("?wait=30 returns as soon as a real transfer completes, well before 30 s")
    func wakesOnCompletion() async throws {
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(TestOrigin.pattern(count: 20_000), for: request, stallAfter: (bytes: 1000, seconds: 1))
        }
        defer { origin.stop() }
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": .string(origin.url("/slow"))], "resume": true])

            let started = ContinuousClock.now
            let polled = try await tenant.task(task.id, wait: 30)
            let elapsed = ContinuousClock.now - started

            #expect(polled.state == "completed")
            #expect(polled.error == nil)
            #expect(polled.countOfBytesReceived == 20_000)
            #expect(elapsed >= .milliseconds(800), "the origin stalls 1 s, so the poll did wait: \(elapsed)")
            #expect(elapsed < .seconds(20), "\(elapsed)")
        }
    }
}
