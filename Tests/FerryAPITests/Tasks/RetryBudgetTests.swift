import FerryCore
import Foundation
import Synchronization
import Testing
import TestOrigin

/// A background task's retries are spent by failed attempts only: suspending and resuming it
/// (each a new claim) leaves them whole. Before stop 28 every claim counted, and a task
/// suspended a few times failed for good at its first transient error.
@Suite("The retry budget of a background task", .sharedHarnesses)
struct RetryBudgetTests {
    @Test("suspends and resumes spend no retry: the task still gets all its attempts", .timeLimit(.minutes(1)))
    func suspendsDoNotSpendRetries() async throws {
        let failing = Atomic<Bool>(false)
        let failedRequests = Atomic<Int>(0)
        let requests = Atomic<Int>(0)
        let origin = try TestOrigin { request, responder in
            requests.add(1, ordering: .relaxed)
            if failing.load(ordering: .relaxed) {
                failedRequests.add(1, ordering: .relaxed)
                // A connection reset before any byte: -1005, which a background session retries.
                try responder.serveResource(TestOrigin.pattern(count: 1_000_000), for: request, etag: "\"b1\"", resetAfter: 0)
            } else {
                try responder.serveResource(TestOrigin.pattern(count: 1_000_000), for: request, etag: "\"b1\"", bytesPerSecond: 10_000)
            }
        }
        defer { origin.stop() }
        try await APIHarness.runWithEngine(configure: { engine in
            engine.retryPolicy = TransferRetryPolicy(baseDelay: .milliseconds(50), multiplier: 1, maximumDelay: .milliseconds(50), maximumAttempts: 3)
        }) { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession(["kind": "background", "identifier": "budget"])
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": .string(origin.url("/b"))], "resume": true])
            // Five suspends and resumes, each resume a new claim and a new request; the origin
            // fails from the last one on.
            for round in 1...5 {
                try await Self.until("request \(round) arrived") { requests.load(ordering: .relaxed) >= round }
                _ = try await tenant.command(.suspend, task.id)
                try await Self.until("suspended") { try await tenant.task(task.id).state == "suspended" }
                if round == 5 { failing.store(true, ordering: .relaxed) }
                _ = try await tenant.command(.resume, task.id)
            }
            let done = try await tenant.task(task.id, wait: 30)
            #expect(done.state == "completed")
            #expect(done.error?.code == -1005)
            // The first failed attempt, then the two retries the policy allows: none was spent
            // by the five claims before.
            #expect(failedRequests.load(ordering: .relaxed) == 3, "\(failedRequests.load(ordering: .relaxed)) failed attempts")
        }
    }

    private static func until(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw WaitFailed(what: what) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private struct WaitFailed: Error, CustomStringConvertible {
        var what: String
        var description: String { "gave up waiting: \(what)" }
    }
}
