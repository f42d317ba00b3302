import FerryCore
import HTTPTypes
import Testing

/// One row of a table of rejected requests: the body, the field the problem must name (nil when
/// the body as a whole is at fault), and the status.
struct BadInput: Sendable, CustomTestStringConvertible {
    enum Payload: Sendable {
        case json(JSONValue)
        case raw([UInt8])
    }

    var label: String
    var payload: Payload
    var field: String?
    var status: HTTPResponse.Status = .badRequest

    var testDescription: String { label }

    init(_ label: String, _ body: JSONValue, field: String?, status: HTTPResponse.Status = .badRequest) {
        self.label = label
        self.payload = .json(body)
        self.field = field
        self.status = status
    }

    init(_ label: String, raw: String, field: String? = nil, status: HTTPResponse.Status = .badRequest) {
        self.init(label, bytes: Array(raw.utf8), status: status)
        self.field = field
    }

    init(_ label: String, bytes: [UInt8], status: HTTPResponse.Status = .badRequest) {
        self.label = label
        self.payload = .raw(bytes)
        self.field = nil
        self.status = status
    }

    /// Sends the body with `client`.
    func send(_ method: HTTPRequest.Method, _ uri: String, with client: FerryClient) async throws -> Reply {
        switch payload {
        case .json(let value): try await client.send(method, uri, json: value)
        case .raw(let bytes): try await client.send(method, uri, raw: bytes)
        }
    }

    /// Sends the body and expects it refused: this input's problem+json, and not a row written.
    @discardableResult
    func expectRefused(
        _ method: HTTPRequest.Method, _ uri: String, with client: FerryClient, in api: APIHarness,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        let before = try await api.rowCounts()
        let reply = try await send(method, uri, with: client)
        let after = try await api.rowCounts()
        expectProblem(reply, status: status, field: field, sourceLocation: sourceLocation)
        #expect(after == before, "a refused request wrote rows", sourceLocation: sourceLocation)
        return reply
    }

    /// Bodies that are not an acceptable JSON object at all; every POST endpoint refuses them alike.
    static let malformedBodies: [BadInput] = [
        BadInput("empty body", raw: ""),
        BadInput("truncated JSON", raw: "{\"name\": "),
        BadInput("trailing garbage", raw: "{} x"),
        BadInput("single quotes", raw: "{'kind': 'data'}"),
        BadInput("a bare word", raw: "hello"),
        BadInput("an array", raw: "[]"),
        BadInput("a string", raw: "\"text\""),
        BadInput("a number", raw: "42"),
        BadInput("null", raw: "null"),
        BadInput("a number too large for a double", raw: "1e400"),
        BadInput("invalid UTF-8", bytes: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D]),
        BadInput("nested 33 levels deep", raw: String(repeating: "[", count: 33) + String(repeating: "]", count: 33)),
        BadInput("nested 50000 levels deep", raw: String(repeating: "[", count: 50_000)),
        BadInput("an object nested 40 levels deep", raw: String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 40)),
    ]
}
