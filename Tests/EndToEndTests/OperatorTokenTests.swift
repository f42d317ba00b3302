import Foundation
import Testing

@Suite("The operator token Ferry generates when FERRY_ADMIN_TOKEN is not set")
struct OperatorTokenTests {
    @Test("the first start prints a token once; it works, and a restart neither prints nor changes it")
    func generatedOnce() async throws {
        try await Testbed.run { testbed in
            var ferry = try await testbed.start("tokenless") { $0.adminToken = nil }
            let token = try #require(Self.printedToken(in: ferry.log()), "no generated token in the output:\n\(ferry.logTail())")
            #expect(token.count >= 20)

            let tenant = try await FerryClient(baseURL: ferry.baseURL, token: token).createTenant(name: "first")
            #expect(tenant.apiKey != nil)
            let wrong = try await FerryClient(baseURL: ferry.baseURL, token: token + "x")
                .send("POST", "/admin/v1/tenants", json: FerryClient.json(["name": "nope"]))
            #expect(wrong.status == 401)
            // A tenant's key is not the operator's.
            let tenantKey = try #require(tenant.apiKey)
            let asTenant = try await FerryClient(baseURL: ferry.baseURL, token: tenantKey)
                .send("POST", "/admin/v1/tenants", json: FerryClient.json(["name": "nope"]))
            #expect(asTenant.status == 401 || asTenant.status == 403)

            _ = try await ferry.terminate()
            ferry = try await testbed.start("tokenless") { $0.adminToken = nil }
            #expect(Self.printedToken(in: ferry.log()) == nil, "a restart printed a token again")
            #expect(try await FerryClient(baseURL: ferry.baseURL, token: token).createTenant(name: "second").name == "second")
        }
    }

    /// The line after "generated the operator token", trimmed.
    static func printedToken(in output: String) -> String? {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: true)
        guard let index = lines.firstIndex(where: { $0.contains("generated the operator token") }), index + 1 < lines.count else { return nil }
        let token = lines[index + 1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty || token.contains(" ") ? nil : token
    }
}
