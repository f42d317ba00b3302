import FerryCore
@testable import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestOrigin

@Suite("Ephemeral sessions keep everything in memory and leave nothing behind")
struct EphemeralSessionTests {
    /// This process's resident set, from /proc (Linux), after glibc hands freed memory back
    /// (what is left is what the process holds, not malloc's free lists).
    static func residentBytes() -> Int {
        // malloc_trim is not in Swift's Glibc module: looked up by name (RTLD_DEFAULT is nil).
        if let symbol = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kilobytes * 1024
    }

    /// Ephemeral, unless `FERRY_MEASURED_KIND=default` asks for the same run with default
    /// sessions (to tell what is ephemeral-specific in the memory figures).
    static let measuredKind = SessionKind(rawValue: ProcessInfo.processInfo.environment["FERRY_MEASURED_KIND"] ?? "") ?? .ephemeral

    /// `FERRY_EPHEMERAL_SESSIONS` sessions (300 unless set), 25 at a time: each stores a
    /// credential, runs a task (a data task, or a download for every other one) that answers a
    /// challenge with it, gets a cookie and caches a 16 KiB response, and is invalidated.
    @Test("an invalidated ephemeral session's cookies, cache and credentials are dropped, and none reached PostgreSQL")
    func nothingLeftBehind() async throws {
        let body = TestOrigin.pattern(count: 16 * 1024)
        let origin = try TestOrigin { request, responder in
            guard try responder.requireBasicAuth(user: "ada", password: "lovelace") else { return }
            try responder.respond(
                status: 200, headers: [("Set-Cookie", "visit=\(request.path.dropFirst()); Path=/"), ("Cache-Control", "max-age=600")], body: body
            )
        }
        defer { origin.stop() }
        let count = Int(ProcessInfo.processInfo.environment["FERRY_EPHEMERAL_SESSIONS"] ?? "") ?? 300
        let batch = 25
        try await EngineHarness.run { ferry in
            let database = ferry.database.database
            var residentAfterWarmUp = 0
            for round in 0..<max(1, count / batch) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<batch {
                        group.addTask {
                            let session = try await ferry.makeSession(SessionConfiguration(kind: Self.measuredKind))
                            _ = try await database.credentials.set(
                                tenantID: ferry.tenant.id, sessionID: session.id,
                                space: ProtectionSpace(host: "127.0.0.1", port: origin.port, protocol: "http", realm: nil, authenticationMethod: .default),
                                user: "ada", password: "lovelace"
                            )
                            let kind: TaskKind = index % 2 == 0 ? .data : .download
                            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: kind, url: origin.url("/r\(round)-\(index)")).id)
                            #expect(task.response?.statusCode == 200)
                            _ = try await database.sessions.invalidate(
                                tenantID: ferry.tenant.id, sessionID: session.id, .finishTasks, resumeData: ferry.resumeData
                            )
                        }
                    }
                    try await group.waitForAll()
                }
                if round == 0 { residentAfterWarmUp = Self.residentBytes() }
            }
            // Each invalidation reaches the engine through NOTIFY.
            let deadline = ContinuousClock.now + .seconds(10)
            while ferry.engine.ephemeralCookies.sessionCount + ferry.engine.urlCache.ephemeralSessionCount
                    + database.ephemeralCredentials.sessionCount > 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(ferry.engine.ephemeralCookies.sessionCount == 0)
            #expect(ferry.engine.urlCache.ephemeralSessionCount == 0)
            #expect(database.ephemeralCredentials.sessionCount == 0)
            let stored = try await database.pool.withConnection { connection in
                try ["session_credentials", "session_cookies", "cache_entries"].map { table in
                    try connection.query("SELECT count(*)::bigint FROM \(table)")[0].decode(0, as: Int64.self)
                }
            }
            #expect(stored == [0, 0, 0], "credentials, cookie jars and cache entries in PostgreSQL")
            let resident = Self.residentBytes()
            print("\(Self.measuredKind.rawValue) sessions: \(count); RSS after the first \(batch): \(residentAfterWarmUp / 1024) KiB, after all: \(resident / 1024) KiB, growth \((resident - residentAfterWarmUp) / 1024) KiB; origin connections: \(origin.connectionsAccepted)")
        }
    }
}
