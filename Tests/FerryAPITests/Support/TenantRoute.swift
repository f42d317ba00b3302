import FerryCore
import HTTPTypes
import Testing

/// Every route under `/v1`, with a valid body where it takes one, for tests that must hold on
/// each of them (authentication, tenant isolation).
struct TenantRoute: Sendable, CustomTestStringConvertible {
    /// The ids a route's placeholders stand for.
    struct IDs: Sendable {
        var session: String
        var task: String
        var blob: String
        var credential: String

        static let unknown = IDs(session: "ses_doesnotexist", task: "tsk_doesnotexist", blob: "blb_doesnotexist", credential: "crd_doesnotexist")

        /// A session with a suspended download, a blob and a credential, made by `tenant`.
        static func make(by tenant: FerryClient) async throws -> IDs {
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"]])
            let blob = try await tenant.call(.put, "/v1/blobs", json: "blob bytes", expecting: .created, as: IdentifiedReply.self)
            let credential = try await tenant.call(
                .put, "/v1/sessions/\(session.id)/credentials", json: Self.credential, expecting: .created, as: IdentifiedReply.self
            )
            return IDs(session: session.id, task: task.id, blob: blob.id, credential: credential.id)
        }

        static let credential: JSONValue = ["protectionSpace": ["host": "example.com"], "user": "alice", "password": "secret"]

        func replacing(in text: String, with other: IDs) -> String {
            text.replacingOccurrences(of: session, with: other.session).replacingOccurrences(of: task, with: other.task)
                .replacingOccurrences(of: blob, with: other.blob).replacingOccurrences(of: credential, with: other.credential)
        }
    }

    var method: HTTPRequest.Method
    /// The path with `{session}`, `{task}`, `{blob}` and `{credential}` placeholders.
    var template: String
    var body: JSONValue?

    var testDescription: String { "\(method) \(template)" }
    var namesAnID: Bool { template.contains("{") }

    /// The resource whose absence a not-found answer names: the first id the path holds.
    var resource: String {
        let placeholders = [("{credential}", "credential"), ("{session}", "session"), ("{task}", "task"), ("{blob}", "blob")]
        for (placeholder, name) in placeholders where template.contains(placeholder) {
            return name
        }
        return "resource"
    }

    func path(_ ids: IDs) -> String {
        template.replacingOccurrences(of: "{session}", with: ids.session).replacingOccurrences(of: "{task}", with: ids.task)
            .replacingOccurrences(of: "{blob}", with: ids.blob).replacingOccurrences(of: "{credential}", with: ids.credential)
    }

    func send(with client: FerryClient, ids: IDs) async throws -> Reply {
        try await client.send(method, path(ids), json: body)
    }

    init(_ method: HTTPRequest.Method, _ template: String, body: JSONValue? = nil) {
        self.method = method
        self.template = template
        self.body = body
    }

    static let all: [TenantRoute] = [
        TenantRoute(.get, "/v1/sessions"),
        TenantRoute(.post, "/v1/sessions", body: ["configuration": ["kind": "default"]]),
        TenantRoute(.get, "/v1/sessions/{session}"),
        TenantRoute(.get, "/v1/sessions/{session}/tasks"),
        TenantRoute(.post, "/v1/sessions/{session}/tasks", body: ["kind": "data", "request": ["url": "http://example.com/a"]]),
        TenantRoute(.post, "/v1/sessions/{session}/tasks/batch", body: ["tasks": [["kind": "data", "request": ["url": "http://example.com/a"]]]]),
        TenantRoute(.post, "/v1/sessions/{session}/finishTasksAndInvalidate"),
        TenantRoute(.post, "/v1/sessions/{session}/invalidateAndCancel"),
        TenantRoute(.post, "/v1/sessions/{session}/reset"),
        TenantRoute(.post, "/v1/sessions/{session}/flush"),
        TenantRoute(.get, "/v1/sessions/{session}/events"),
        TenantRoute(.get, "/v1/sessions/{session}/delegate"),
        TenantRoute(.post, "/v1/sessions/{session}/delegate/rotateSecret"),
        TenantRoute(.put, "/v1/sessions/{session}/credentials", body: IDs.credential),
        TenantRoute(.get, "/v1/sessions/{session}/credentials"),
        TenantRoute(.delete, "/v1/sessions/{session}/credentials/{credential}"),
        TenantRoute(.get, "/v1/tasks/{task}"),
        TenantRoute(.get, "/v1/tasks/{task}?wait=1"),
        TenantRoute(.post, "/v1/tasks/{task}/resume"),
        TenantRoute(.post, "/v1/tasks/{task}/suspend"),
        TenantRoute(.post, "/v1/tasks/{task}/cancel"),
        TenantRoute(.post, "/v1/tasks/{task}/cancelByProducingResumeData"),
        TenantRoute(.get, "/v1/tasks/{task}/data"),
        TenantRoute(.get, "/v1/tasks/{task}/file"),
        TenantRoute(.delete, "/v1/tasks/{task}/file"),
        TenantRoute(.get, "/v1/tasks/{task}/metrics"),
        TenantRoute(.get, "/v1/tasks/{task}/events"),
        TenantRoute(.get, "/v1/tasks/{task}/delegate"),
        TenantRoute(.post, "/v1/tasks/{task}/delegate/rotateSecret"),
        TenantRoute(.get, "/v1/blobs/{blob}"),
        TenantRoute(.delete, "/v1/blobs/{blob}"),
    ]

    static let withIDs = all.filter(\.namesAnID)
}

/// Any answer with an `id`.
struct IdentifiedReply: Decodable, Sendable {
    var id: String
}
