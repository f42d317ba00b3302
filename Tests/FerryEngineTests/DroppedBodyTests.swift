import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

/// A body the task does not keep (a redirect's) is read only so far: an origin sending an
/// endless one must not hold the transfer until timeoutIntervalForResource (issue 17).
@Suite("Bodies Ferry drops are bounded")
struct DroppedBodyTests {
    @Test("a redirect with an endless body: at most 1 MiB of it is read, then the redirect is followed")
    func endlessRedirectBody() async throws {
        let origin = try TestOrigin(TestOrigin.routes([
            "/endless": { _, responder in try responder.redirectWithEndlessBody(to: "/target") },
            "/target": { request, responder in try responder.serveResource(Array("target".utf8), for: request) },
        ]))
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let started = ContinuousClock.now
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/endless")).id)
            #expect(task.state == .completed, "before the fix the endless body was read until timeoutIntervalForResource")
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200)
            #expect(try await ferry.responseBody(of: task.id) == Array("target".utf8))
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }
}
