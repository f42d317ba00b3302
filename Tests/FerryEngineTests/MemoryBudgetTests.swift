import FerryCore
import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

/// What transfers hold in memory has a process-wide bound (`FERRY_MEMORY_BUDGET_BYTES`).
@Suite("The process's memory budget")
struct MemoryBudgetTests {
    @Test("data-task bodies beyond the shared budget fail with -1103 saying so; the budget comes back when they end")
    func dataBodiesShareABudget() async throws {
        let body = TestOrigin.pattern(count: 1_500_000, seed: 7)
        let origin = try TestOrigin { request, responder in
            // Most of the body at once, then a pause, so the transfers hold their bodies together.
            try responder.respond(status: 200, body: body, faults: BodyFaults(stallAfter: (bytes: 1_400_000, seconds: 1.5)))
        }
        defer { origin.stop() }
        // 4 MiB in all: three quarters for bodies (3 MiB), for three bodies of 1.5 MB.
        try await EngineHarness.run(configure: { $0.memoryBudgetBytes = 4 * 1024 * 1024 }) { ferry in
            let session = try await ferry.makeSession(SessionConfiguration(kind: .default))
            var tasks: [TaskRecord] = []
            for index in 0..<3 {
                tasks.append(try await ferry.startTask(in: session, kind: .data, url: origin.url("/body/\(index)")))
            }
            var ended: [TaskRecord] = []
            for task in tasks { ended.append(try await ferry.completion(of: task.id)) }

            let refused = ended.filter { $0.error?.code == URLErrorCode.dataLengthExceedsMaximum.rawValue }
            let completed = ended.filter { $0.error == nil }
            #expect(!refused.isEmpty, "three bodies of 1.5 MB do not fit in 3 MiB: \(ended.map { String(describing: $0.error) })")
            #expect(refused.allSatisfy { $0.error?.reason?.contains("memory") == true })
            #expect(!completed.isEmpty)
            for task in completed { #expect(try await ferry.responseBody(of: task.id) == body) }
            #expect(ferry.engine.memory.usedBytes == 0, "every body's share came back")

            let again = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/again")).id)
            #expect(again.error == nil)
        }
    }

    @Test("ephemeral sessions' URL caches share a global cap: the oldest entries of any session go first")
    func ephemeralCachesShareACap() async throws {
        let body = TestOrigin.pattern(count: 300_000, seed: 8)
        let origin = try TestOrigin { request, responder in
            try responder.serveResource(body, for: request, extraHeaders: [("Cache-Control", "max-age=600")])
        }
        defer { origin.stop() }
        // A quarter of 4 MiB for ephemeral caches: three entries of 300 KB fit, five do not.
        try await EngineHarness.run(configure: { $0.memoryBudgetBytes = 4 * 1024 * 1024 }) { ferry in
            var sessions: [SessionRecord] = []
            for _ in 0..<5 { sessions.append(try await ferry.makeSession(SessionConfiguration(kind: .ephemeral))) }
            let first = try await ferry.completion(of: try await ferry.startTask(in: sessions[0], kind: .data, url: origin.url("/c")).id)
            #expect(first.error == nil)
            try await Task.sleep(for: .milliseconds(200))
            _ = try await ferry.completion(of: try await ferry.startTask(in: sessions[0], kind: .data, url: origin.url("/c")).id)
            #expect(origin.requests(path: "/c").count == 1, "the first session answers from its cache")

            for session in sessions.dropFirst() {
                _ = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/c")).id)
                try await Task.sleep(for: .milliseconds(100))
            }
            let before = origin.requests(path: "/c").count
            let evicted = try await ferry.completion(of: try await ferry.startTask(in: sessions[0], kind: .data, url: origin.url("/c")).id)

            #expect(before == 5)
            #expect(evicted.error == nil)
            #expect(origin.requests(path: "/c").count == 6, "the first session's entry was evicted for the others'")
        }
    }
}
