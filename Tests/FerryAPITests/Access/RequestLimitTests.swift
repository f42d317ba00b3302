import FerryCore
import HTTPTypes
import Testing

@Suite("Request limits and unknown routes: 413, 414, 431 and 404 as problem+json, never a 5xx", .sharedHarnesses)
struct RequestLimitTests {
    /// A POST endpoint and the size of a body just over its limit.
    struct OversizedBody: Sendable, CustomTestStringConvertible {
        var route: String
        var bytes: Int
        var testDescription: String { "\(route) with \(bytes) bytes" }
    }

    static let oversized: [OversizedBody] = [
        OversizedBody(route: "/admin/v1/tenants", bytes: 64 * 1024 + 1),
        OversizedBody(route: "/v1/sessions", bytes: 64 * 1024 + 1),
        OversizedBody(route: "/v1/sessions/{session}/tasks", bytes: 8 * 1024 * 1024 * 4 / 3 + 64 * 1024 + 1),
        OversizedBody(route: "/v1/sessions/{session}/tasks/batch", bytes: 8 * 1024 * 1024 + 1),
        OversizedBody(route: "/v1/tasks/{task}/cancel", bytes: 64 * 1024 + 1),
    ]

    @Test("a JSON body over the limit is 413, and nothing is written", arguments: oversized)
    func bodyTooLarge(_ input: OversizedBody) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": "http://example.com/a"]])
            let client = input.route.hasPrefix("/admin") ? api.operatorClient : tenant
            let before = try await api.rowCounts()
            let prefix = Array("{\"name\": \"".utf8)
            let body = prefix + [UInt8](repeating: UInt8(ascii: "n"), count: input.bytes - prefix.count - 2) + Array("\"}".utf8)
            let path = input.route.replacingOccurrences(of: "{session}", with: session.id).replacingOccurrences(of: "{task}", with: task.id)

            let reply = try await client.send(.post, path, raw: body)

            expectProblem(reply, status: .contentTooLarge)
            #expect(reply.requestID != nil)
            #expect(try await api.rowCounts() == before)
        }
    }

    @Test("a request target over 8 KiB is 414, before authentication")
    func uriTooLong() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let longQuery = "/v1/sessions?after=" + String(repeating: "a", count: 8 * 1024)
            let longPath = "/v1/tasks/tsk_" + String(repeating: "a", count: 8 * 1024)

            expectProblem(try await tenant.send(.get, longQuery), status: .uriTooLong)
            expectProblem(try await tenant.send(.get, longPath), status: .uriTooLong)
            expectProblem(try await api.anonymousClient.send(.get, longQuery), status: .uriTooLong)
            #expect(try await tenant.send(.get, "/v1/sessions?after=" + String(repeating: "a", count: 200)).status == .badRequest, "an ordinary 400 below the limit")
        }
    }

    @Test("headers over 32 KiB are 431, in one header or in many")
    func headersTooLarge() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            var one: HTTPFields = [:]
            one[HTTPField.Name("X-Padding")!] = String(repeating: "p", count: 33 * 1024)
            var many: HTTPFields = [:]
            for index in 0..<1000 {
                many.append(HTTPField(name: HTTPField.Name("X-Padding-\(index)")!, value: String(repeating: "p", count: 30)))
            }

            expectProblem(try await tenant.send(.get, "/v1/sessions", headers: one), status: .requestHeaderFieldsTooLarge)
            expectProblem(try await tenant.send(.get, "/v1/sessions", headers: many), status: .requestHeaderFieldsTooLarge)
            expectProblem(try await api.anonymousClient.send(.get, "/healthz", headers: one), status: .requestHeaderFieldsTooLarge)
        }
    }

    static let unknownRoutes: [(HTTPRequest.Method, String)] = [
        (.get, "/nope"), (.get, "/v1"), (.get, "/v1/"), (.get, "/v1/nope"), (.get, "/v2/sessions"),
        (.get, "/admin/v1/nope"), (.get, "/v1/tasks/tsk_x/nope"), (.get, "/v1/sessions/ses_x/tasks/tsk_x"),
        // Wrong methods on known paths.
        (.delete, "/v1/sessions"), (.put, "/v1/sessions/ses_x"), (.patch, "/v1/tasks/tsk_x"), (.delete, "/v1/tasks/tsk_x"),
        (.get, "/v1/tasks/tsk_x/resume"), (.put, "/v1/tasks/tsk_x/file"), (.post, "/healthz"), (.delete, "/admin/v1/tenants"),
        (.post, "/v1/tasks/tsk_x/data"),
    ]

    @Test("unknown routes and wrong methods are 404 or 405 problem+json", arguments: unknownRoutes)
    func unknownRoute(_ method: HTTPRequest.Method, _ path: String) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()

            let reply = try await tenant.send(method, path, json: method == .get ? nil : [:])

            #expect(reply.status == .notFound || reply.status == .methodNotAllowed, "\(reply)")
            expectProblem(reply, status: reply.status)
        }
    }

    @Test("every response carries its own X-Request-ID, errors included")
    func requestIDs() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let replies: [Reply] = [
                try await api.anonymousClient.send(.get, "/healthz"),
                try await api.anonymousClient.send(.get, "/readyz"),
                try await tenant.send(.get, "/v1/sessions"),
                try await tenant.send(.post, "/v1/sessions/\(session.id)/tasks", json: ["kind": "data", "request": ["url": "http://example.com/a"]]),
                try await tenant.send(.post, "/v1/sessions", json: ["configuration": ["kind": "nope"]]),
                try await api.anonymousClient.send(.get, "/v1/sessions"),
                try await tenant.send(.get, "/v1/sessions/ses_missing"),
                try await tenant.send(.get, "/v1/nope"),
                try await tenant.send(.get, "/v1/sessions?limit=0"),
                try await tenant.send(.post, "/v1/sessions", raw: Array("{".utf8)),
            ]
            for reply in replies {
                #expect(reply.requestID?.isEmpty == false, "\(reply)")
            }
            #expect(Set(replies.compactMap(\.requestID)).count == replies.count, "every request id is distinct")
        }
    }
}
