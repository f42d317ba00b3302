import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

@Suite("Each session's own cookie storage")
struct CookieTests {
    /// /login sets a cookie and redirects to /whoami, which answers with the Cookie it received.
    private func origin() throws -> TestOrigin {
        try TestOrigin(TestOrigin.routes([
            "/login": { _, responder in
                try responder.respond(status: 302, headers: [("Location", "/whoami"), ("Set-Cookie", "user=ada; Path=/; HttpOnly")], body: [])
            },
            "/whoami": { request, responder in
                try responder.respond(status: 200, body: Array((request.header("Cookie") ?? "none").utf8))
            },
        ]))
    }

    private func body(_ ferry: EngineHarness, _ session: SessionRecord, _ url: String) async throws -> String {
        let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: url).id)
        return String(decoding: try await ferry.responseBody(of: task.id) ?? [], as: UTF8.self)
    }

    @Test("a cookie set on a redirect is sent on the next hop, and later by the session's other tasks", arguments: [SessionKind.default, .ephemeral])
    func cookiesPersist(kind: SessionKind) async throws {
        let origin = try origin()
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession(SessionConfiguration(kind: kind))
            #expect(try await body(ferry, session, origin.url("/login")) == "user=ada")
            // The session's jar learns the cookie asynchronously; give it a moment.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await body(ferry, session, origin.url("/whoami")) == "user=ada")
            let other = try await ferry.makeSession(SessionConfiguration(kind: kind))
            #expect(try await body(ferry, other, origin.url("/whoami")) == "none")
            if kind == .default {
                #expect(try await ferry.database.database.cookies.jar(ofSession: session.id).cookies.map(\.name) == ["user"])
            }
        }
    }

    @Test("httpShouldSetCookies false and the never policy keep cookies out")
    func disabled() async throws {
        let origin = try origin()
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            var off = SessionConfiguration(kind: .default)
            off.httpShouldSetCookies = false
            let offSession = try await ferry.makeSession(off)
            #expect(try await body(ferry, offSession, origin.url("/login")) == "none")
            var never = SessionConfiguration(kind: .default)
            never.httpCookieAcceptPolicy = .never
            let neverSession = try await ferry.makeSession(never)
            #expect(try await body(ferry, neverSession, origin.url("/login")) == "none")
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await ferry.database.database.cookies.jar(ofSession: neverSession.id).cookies.isEmpty)
        }
    }
}
