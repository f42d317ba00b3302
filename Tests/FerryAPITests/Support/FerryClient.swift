import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting

/// A client of Ferry's API holding one credential: `send` for any request, and one helper per
/// endpoint that checks the status and returns the decoded answer, so tests stay short.
struct FerryClient: Sendable {
    let http: any TestClientProtocol
    /// Sent as `Authorization: Bearer <token>`; nil sends no credentials.
    let token: String?
    /// The tenant the token belongs to, for tenant clients.
    var tenantID: String = ""

    /// Sends a request. `json` is serialised; `raw` is sent verbatim (for bodies that are not JSON).
    func send(
        _ method: HTTPRequest.Method, _ uri: String,
        json: JSONValue? = nil, raw: [UInt8]? = nil, headers: HTTPFields = [:]
    ) async throws -> Reply {
        var headers = headers
        if let token, headers[.authorization] == nil { headers[.authorization] = "Bearer \(token)" }
        let bytes = raw ?? json?.serialized()
        if bytes != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        let response = try await http.executeRequest(uri: uri, method: method, headers: headers, body: bytes.map { ByteBuffer(bytes: $0) })
        return Reply(response)
    }

    /// Sends and decodes, failing with the whole answer unless the status is `status`.
    func call<T: Decodable>(
        _ method: HTTPRequest.Method, _ uri: String, json: JSONValue? = nil, headers: HTTPFields = [:],
        expecting status: HTTPResponse.Status, as type: T.Type
    ) async throws -> T {
        let reply = try await send(method, uri, json: json, headers: headers)
        guard reply.status == status else { throw UnexpectedReply(reply: reply, expectation: "\(status.code)") }
        return try reply.decode(type)
    }

    // MARK: Operators

    func createTenant(_ body: JSONValue, expecting status: HTTPResponse.Status = .created) async throws -> TenantReply {
        try await call(.post, "/admin/v1/tenants", json: body, expecting: status, as: TenantReply.self)
    }

    // MARK: Sessions

    func createSession(
        _ configuration: JSONValue = ["kind": "default"], expecting status: HTTPResponse.Status = .created
    ) async throws -> SessionReply {
        try await call(.post, "/v1/sessions", json: ["configuration": configuration], expecting: status, as: SessionReply.self)
    }

    func sessions(query: String = "") async throws -> ListReply<SessionReply> {
        try await call(.get, "/v1/sessions\(query)", expecting: .ok, as: ListReply<SessionReply>.self)
    }

    func session(_ id: String) async throws -> SessionReply {
        try await call(.get, "/v1/sessions/\(id)", expecting: .ok, as: SessionReply.self)
    }

    func tasks(in sessionID: String, query: String = "") async throws -> ListReply<TaskReply> {
        try await call(.get, "/v1/sessions/\(sessionID)/tasks\(query)", expecting: .ok, as: ListReply<TaskReply>.self)
    }

    // MARK: Tasks

    func createTask(
        in sessionID: String, _ body: JSONValue, idempotencyKey: String? = nil,
        expecting status: HTTPResponse.Status = .created
    ) async throws -> TaskReply {
        var headers: HTTPFields = [:]
        if let idempotencyKey { headers[HTTPField.Name("Idempotency-Key")!] = idempotencyKey }
        return try await call(.post, "/v1/sessions/\(sessionID)/tasks", json: body, headers: headers, expecting: status, as: TaskReply.self)
    }

    /// `GET /v1/tasks/{id}`, long-polling with `?wait=` when given.
    func task(_ id: String, wait: Double? = nil) async throws -> TaskReply {
        let query = wait.map { "?wait=\($0)" } ?? ""
        return try await call(.get, "/v1/tasks/\(id)\(query)", expecting: .ok, as: TaskReply.self)
    }

    /// `resume`, `suspend` or `cancel`, without a body, as `curl -X POST` sends them.
    func command(_ name: TaskCommand, _ id: String) async throws -> TaskReply {
        try await call(.post, "/v1/tasks/\(id)/\(name.rawValue)", expecting: .ok, as: TaskReply.self)
    }

    func cancelByProducingResumeData(_ id: String) async throws -> String? {
        try await call(.post, "/v1/tasks/\(id)/cancelByProducingResumeData", expecting: .ok, as: ResumeDataReply.self).resumeData
    }

    /// A data or upload task's response body.
    func data(_ id: String) async throws -> [UInt8] {
        let reply = try await send(.get, "/v1/tasks/\(id)/data")
        guard reply.status == .ok else { throw UnexpectedReply(reply: reply, expectation: "200") }
        return reply.body
    }

    /// A download's file; the status and headers matter, so the whole reply.
    func file(_ id: String, range: String? = nil) async throws -> Reply {
        var headers: HTTPFields = [:]
        if let range { headers[.range] = range }
        return try await send(.get, "/v1/tasks/\(id)/file", headers: headers)
    }

    func deleteFile(_ id: String) async throws -> Reply {
        try await send(.delete, "/v1/tasks/\(id)/file")
    }
}

/// URLSessionTask's plain commands.
enum TaskCommand: String, Sendable, CaseIterable {
    case resume, suspend, cancel
}
