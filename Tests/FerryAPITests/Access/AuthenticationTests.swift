import FerryCore
import HTTPTypes
import Testing

@Suite("Authentication: every bad credential is a 401 problem, tenant keys and the operator token are not interchangeable", .sharedHarnesses)
struct AuthenticationTests {
    /// A credential a client might present instead of a valid tenant API key.
    enum BadCredential: String, CaseIterable, Sendable {
        case missing, emptyBearer, malformed, basicScheme, keyWithoutScheme, unknownKey, alteredKey, revokedKey
        case twoKeys, operatorToken, hugeToken, prefixOnly

        /// The `Authorization` value, given a valid key of the tenant and the operator token.
        func header(validKey: String, operatorToken: String) -> String? {
            var random = SystemRandomNumberGenerator()
            switch self {
            case .missing: return nil
            case .emptyBearer: return "Bearer "
            case .malformed: return "Bearer xyz"
            case .basicScheme: return "Basic dXNlcjpwYXNzd29yZA=="
            case .keyWithoutScheme: return validKey
            case .unknownKey: return "Bearer \(APIKey.generate(using: &random))"
            case .alteredKey: return "Bearer \(validKey.dropLast())\(validKey.last == "A" ? "B" : "A")"
            case .revokedKey: return "Bearer \(validKey)"
            case .twoKeys: return "Bearer \(validKey) \(validKey)"
            case .operatorToken: return "Bearer \(operatorToken)"
            case .hugeToken: return "Bearer " + String(repeating: "k", count: 16 * 1024)
            case .prefixOnly: return "Bearer fy_live_"
            }
        }
    }

    @Test("tenant routes answer 401 with WWW-Authenticate", arguments: BadCredential.allCases)
    func refusesBadCredentials(_ credential: BadCredential) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            _ = try await tenant.createSession()
            if credential == .revokedKey {
                try await api.revokeKeys(of: tenant)
            }
            var headers: HTTPFields = [:]
            if let value = credential.header(validKey: try #require(tenant.token), operatorToken: api.operatorToken) {
                headers[.authorization] = value
            }

            let reply = try await api.anonymousClient.send(.get, "/v1/sessions", headers: headers)

            expectProblem(reply, status: .unauthorized)
            #expect(reply.headers[.wwwAuthenticate] == "Bearer")
            #expect(!reply.text.contains("ses_"), "nothing of the tenant leaks")
        }
    }

    @Test("the operator token opens no tenant route", arguments: TenantRoute.all)
    func operatorTokenIsNotATenantKey(_ route: TenantRoute) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let ids = try await TenantRoute.IDs.make(by: tenant)
            let before = try await api.rowCounts()

            let reply = try await route.send(with: api.operatorClient, ids: ids)

            expectProblem(reply, status: .unauthorized)
            #expect(try await api.rowCounts() == before)
            #expect(try await tenant.task(ids.task).state == "suspended")
        }
    }

    @Test("admin routes refuse tenant keys, no token and wrong tokens", arguments: ["tenantKey", "none", "wrongToken", "basic"])
    func adminRoutesNeedTheOperatorToken(_ credential: String) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            var headers: HTTPFields = [:]
            switch credential {
            case "tenantKey": headers[.authorization] = "Bearer \(try #require(tenant.token))"
            case "wrongToken": headers[.authorization] = "Bearer \(api.operatorToken)x"
            case "basic": headers[.authorization] = "Basic b3BlcmF0b3I6c2VjcmV0"
            default: break
            }
            let before = try await api.rowCounts()

            let reply = try await api.anonymousClient.send(.post, "/admin/v1/tenants", json: ["name": "intruder"], headers: headers)

            expectProblem(reply, status: .unauthorized)
            #expect(try await api.rowCounts() == before)
        }
    }

    @Test("the scheme is case-insensitive, as RFC 9110 says")
    func schemeIsCaseInsensitive() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            var headers: HTTPFields = [:]
            headers[.authorization] = "bearer \(try #require(tenant.token))"

            let reply = try await api.anonymousClient.send(.get, "/v1/sessions", headers: headers)

            #expect(reply.status == .ok, "\(reply)")
        }
    }

    @Test("a suspended tenant's valid key is refused with 403")
    func suspendedTenant() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            _ = try await api.operatorClient.call(.post, "/admin/v1/tenants/\(tenant.tenantID)/suspend", json: [:], expecting: .ok, as: TenantReply.self)

            expectProblem(try await tenant.send(.get, "/v1/sessions"), status: .forbidden)
        }
    }
}
