import FerryCore
import HTTPTypes
import Testing

@Suite("PUT /v1/tasks/{id}/body: a streamed upload's body", .sharedHarnesses)
struct BodyStreamTests {
    private func streamTask(_ tenant: FerryClient, in sessionID: String) async throws -> TaskReply {
        try await tenant.createTask(in: sessionID, [
            "kind": "upload", "request": ["url": "http://127.0.0.1:9/in", "httpMethod": "PUT"], "body": ["stream": true],
        ])
    }

    @Test("a body is taken once per stream; a tenant at its storage quota streams no more, as it stores no blob")
    func quota() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let patched = try await api.operatorClient.send(.patch, "/admin/v1/tenants/\(tenant.tenantID)", json: ["quotas": ["maxStoredBytes": 1000]])
            #expect(patched.status == .ok)
            let session = try await tenant.createSession()
            let first = try await streamTask(tenant, in: session.id)
            let second = try await streamTask(tenant, in: session.id)
            #expect(try await tenant.send(.put, "/v1/tasks/\(first.id)/body", raw: Array(repeating: 7, count: 100)).status == .ok)
            expectProblem(try await tenant.send(.put, "/v1/tasks/\(first.id)/body", raw: [1]), status: .conflict)

            // A blob takes the tenant past its quota.
            #expect(try await tenant.send(.put, "/v1/blobs", raw: Array(repeating: 1, count: 2000)).status == .created)
            expectProblem(try await tenant.send(.put, "/v1/tasks/\(second.id)/body", raw: Array(repeating: 7, count: 100)), status: .forbidden)
            expectProblem(try await tenant.send(.put, "/v1/blobs", raw: [1]), status: .forbidden)
        }
    }
}
