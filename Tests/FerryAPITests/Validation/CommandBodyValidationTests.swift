import FerryCore
import Testing

@Suite("Command endpoints take no parameters: a body other than none or {} is a 4xx, and the task is untouched", .sharedHarnesses)
struct CommandBodyValidationTests {
    static let commands = ["resume", "suspend", "cancel", "cancelByProducingResumeData"]
    static let sessionCommands = ["finishTasksAndInvalidate", "invalidateAndCancel", "reset", "flush"]

    static let bodies: [BadInput] = [
        BadInput("unknown field", ["force": true], field: "force"),
        BadInput("unknown field resumeData", ["resumeData": "frd1.AAAA.AAAA"], field: "resumeData"),
        BadInput("a JSON array", raw: "[]"),
        BadInput("a JSON string", raw: "\"cancel\""),
        BadInput("not JSON", raw: "please"),
        BadInput("truncated JSON", raw: "{\"a\":"),
        BadInput("nested 40 levels deep", raw: String(repeating: "[", count: 40) + String(repeating: "]", count: 40)),
        BadInput(
            "a body over 64 KiB", ["padding": .repeated(" ", count: 70 * 1024)], field: nil,
            status: .contentTooLarge
        ),
    ]

    @Test("refused", arguments: commands, bodies)
    func refuses(_ command: String, _ input: BadInput) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"]])
            let before = try await api.rowCounts()

            let reply = try await input.send(.post, "/v1/tasks/\(task.id)/\(command)", with: tenant)

            expectProblem(reply, status: input.status, field: input.field)
            expectNoServerError(reply, "\(command) with \(input.label)")
            #expect(try await tenant.task(task.id).state == "suspended")
            #expect(try await api.rowCounts() == before)
        }
    }

    static let parameterlessPOSTs = commands.map { "/v1/tasks/{task}/\($0)" } + sessionCommands.map { "/v1/sessions/{session}/\($0)" }
        + ["/admin/v1/tenants/{tenant}/suspend", "/admin/v1/tenants/{tenant}/activate", "/admin/v1/tenants/{tenant}/keys"]

    @Test("{} and no body at all are both accepted", arguments: parameterlessPOSTs)
    func acceptsEmptyBodies(_ template: String) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let client = template.hasPrefix("/admin") ? api.operatorClient : tenant
            func path() async throws -> String {
                guard !template.contains("{tenant}") else { return template.replacingOccurrences(of: "{tenant}", with: tenant.tenantID) }
                let session = try await tenant.createSession()
                let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"]])
                return template.replacingOccurrences(of: "{task}", with: task.id).replacingOccurrences(of: "{session}", with: session.id)
            }

            let withEmptyObject = try await client.send(.post, try await path(), json: [:])
            let withoutBody = try await client.send(.post, try await path())

            #expect((200..<300).contains(withEmptyObject.status.code), "\(withEmptyObject)")
            #expect((200..<300).contains(withoutBody.status.code), "\(withoutBody)")
        }
    }

    @Test("session commands refuse the same bodies, and the session stays valid", arguments: sessionCommands, bodies)
    func sessionCommandRefuses(_ command: String, _ input: BadInput) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"]])
            let before = try await api.rowCounts()

            let reply = try await input.send(.post, "/v1/sessions/\(session.id)/\(command)", with: tenant)

            expectProblem(reply, status: input.status, field: input.field)
            expectNoServerError(reply, "\(command) with \(input.label)")
            #expect(try await tenant.session(session.id).state == "valid")
            #expect(try await tenant.task(task.id).state == "suspended")
            #expect(try await api.rowCounts() == before)
        }
    }
}
