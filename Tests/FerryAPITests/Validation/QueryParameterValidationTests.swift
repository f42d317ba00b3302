import FerryCore
import Testing

/// A bad query string on one of the routes that read query parameters.
struct BadQuery: Sendable, CustomTestStringConvertible {
    enum Route: String, Sendable {
        case sessions = "GET /v1/sessions"
        case sessionTasks = "GET /v1/sessions/{id}/tasks"
        case task = "GET /v1/tasks/{id}"

        func path(session: String, task: String) -> String {
            switch self {
            case .sessions: "/v1/sessions"
            case .sessionTasks: "/v1/sessions/\(session)/tasks"
            case .task: "/v1/tasks/\(task)"
            }
        }
    }

    var route: Route
    var query: String
    var field: String

    var testDescription: String { "\(route.rawValue)?\(query.prefix(40))" }

    init(_ route: Route, _ query: String, field: String) {
        self.route = route
        self.query = query
        self.field = field
    }
}

@Suite("Query parameters: limit, after, state, kind and wait refuse bad values with a 400 naming them", .sharedHarnesses)
struct QueryParameterValidationTests {

    static func pagination(_ route: BadQuery.Route) -> [BadQuery] {
        [
            BadQuery(route, "limit=0", field: "query.limit"),
            BadQuery(route, "limit=1001", field: "query.limit"),
            BadQuery(route, "limit=-1", field: "query.limit"),
            BadQuery(route, "limit=abc", field: "query.limit"),
            BadQuery(route, "limit=1.5", field: "query.limit"),
            BadQuery(route, "limit=1e3", field: "query.limit"),
            BadQuery(route, "limit=99999999999999999999999", field: "query.limit"),
            BadQuery(route, "limit=", field: "query.limit"),
            BadQuery(route, "after=", field: "query.after"),
            BadQuery(route, "after=" + String(repeating: "c", count: 129), field: "query.after"),
            BadQuery(route, "after=ses_%00", field: "query.after"),
            // Well-formed, but naming nothing of the list: not an empty last page.
            BadQuery(route, "after=ses_nope", field: "query.after"),
            BadQuery(route, "after=tsk_nope", field: "query.after"),
        ]
    }

    static let cases: [BadQuery] = pagination(.sessions) + pagination(.sessionTasks) + [
        BadQuery(.sessionTasks, "state=bogus", field: "query.state"),
        BadQuery(.sessionTasks, "state=running,bogus", field: "query.state"),
        BadQuery(.sessionTasks, "state=RUNNING", field: "query.state"),
        BadQuery(.sessionTasks, "state=%00", field: "query.state"),
        BadQuery(.sessionTasks, "state=", field: "query.state"),
        BadQuery(.sessionTasks, "kind=video", field: "query.kind"),
        BadQuery(.sessionTasks, "kind=data,video", field: "query.kind"),
        BadQuery(.sessionTasks, "kind=", field: "query.kind"),
        BadQuery(.task, "wait=-1", field: "query.wait"),
        BadQuery(.task, "wait=121", field: "query.wait"),
        BadQuery(.task, "wait=abc", field: "query.wait"),
        BadQuery(.task, "wait=nan", field: "query.wait"),
        BadQuery(.task, "wait=inf", field: "query.wait"),
        BadQuery(.task, "wait=-inf", field: "query.wait"),
        BadQuery(.task, "wait=1e400", field: "query.wait"),
        BadQuery(.task, "wait=", field: "query.wait"),
        BadQuery(.task, "wait=0x1", field: "query.wait"),
        BadQuery(.sessions, "limt=5", field: "query.limt"),
        BadQuery(.sessionTasks, "states=running", field: "query.states"),
    ]

    @Test("refused", arguments: cases)
    func refuses(_ input: BadQuery) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": "http://example.com/a"]])

            let reply = try await tenant.send(.get, "\(input.route.path(session: session.id, task: task.id))?\(input.query)")

            expectProblem(reply, status: .badRequest, field: input.field)
            expectNoServerError(reply, input.testDescription)
        }
    }

    @Test("good values are honoured: limit and after page, state and kind filter")
    func paginatesAndFilters() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let first = try await tenant.createSession()
            let second = try await tenant.createSession()
            let data = try await tenant.createTask(in: first.id, ["kind": "data", "request": ["url": "http://example.com/a"]])
            let download = try await tenant.createTask(in: first.id, ["kind": "download", "request": ["url": "http://example.com/b"], "resume": true])

            let page = try await tenant.sessions(query: "?limit=1")
            #expect(page.data.map(\.id) == [first.id])
            let next = try await tenant.sessions(query: "?limit=1&after=\(try #require(page.nextCursor))")
            #expect(next.data.map(\.id) == [second.id])
            #expect(next.nextCursor == nil)
            // After the last item: an empty page, not a refusal.
            #expect(try await tenant.sessions(query: "?after=\(second.id)").data.isEmpty)

            #expect(try await tenant.tasks(in: first.id, query: "?state=running").data.map(\.id) == [download.id])
            #expect(try await tenant.tasks(in: first.id, query: "?state=suspended,running").data.count == 2)
            #expect(try await tenant.tasks(in: first.id, query: "?kind=data").data.map(\.id) == [data.id])
            #expect(try await tenant.tasks(in: first.id, query: "?limit=1&after=\(data.id)").data.map(\.id) == [download.id])
        }
    }
}
