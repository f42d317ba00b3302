import FerryCore
import Testing

@Suite("PUT /v1/sessions/{id}/credentials: every bad field is a 4xx naming it, and nothing is written", .sharedHarnesses)
struct CredentialValidationTests {
    static let valid: JSONValue = ["protectionSpace": ["host": "example.com", "port": 443, "protocol": "https"], "user": "alice", "password": "secret"]

    static func credential(_ path: String, _ value: JSONValue?, field: String? = nil) -> BadInput {
        BadInput("\(path) = \(value?.serializedText ?? "absent")", valid.setting(path, to: value), field: field ?? path)
    }

    static let cases: [BadInput] = [
        credential("protectionSpace", nil),
        credential("protectionSpace", "example.com"),
        credential("protectionSpace.host", nil),
        credential("protectionSpace.host", ""),
        credential("protectionSpace.host", "exa mple.com"),
        credential("protectionSpace.host", "example.com/\r\nX: y"),
        credential("protectionSpace.host", 5),
        credential("protectionSpace.port", 0),
        credential("protectionSpace.port", 65536),
        credential("protectionSpace.port", "443"),
        credential("protectionSpace.protocol", "ftp"),
        credential("protectionSpace.realm", 7),
        credential("protectionSpace.realm", .repeated("r", count: 257)),
        credential("protectionSpace.realm", "staff\u{0}"),
        credential("protectionSpace.authenticationMethod", "kerberos-ish"),
        credential("protectionSpace.scheme", "https"),
        credential("user", nil),
        credential("user", ""),
        credential("user", 42),
        credential("user", "ali\r\nce", field: "user"),
        credential("user", "ali\u{0}ce", field: "user"),
        credential("password", nil),
        credential("password", .repeated("p", count: 1025)),
        credential("password", "se\ncret"),
        credential("persistence", "permanent"),
        BadInput(
            "a trailing comma", raw: #"{"protectionSpace":{"host":"example.com"},"user":"alice","password":"secret",}"#
        ),
    ] + BadInput.malformedBodies

    @Test("refused", arguments: cases)
    func refuses(_ input: BadInput) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let reply = try await input.expectRefused(.put, "/v1/sessions/\(session.id)/credentials", with: tenant, in: api)
            #expect(!reply.text.contains("secret"), "the password is never echoed")
        }
    }
}
