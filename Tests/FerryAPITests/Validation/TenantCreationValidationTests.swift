import FerryCore
import Testing

@Suite("POST /admin/v1/tenants: every bad field is a 4xx naming it, and nothing is written", .sharedHarnesses)
struct TenantCreationValidationTests {
    static let cases: [BadInput] = [
        BadInput("name missing", [:], field: "name"),
        BadInput("name null", ["name": nil], field: "name"),
        BadInput("name empty", ["name": ""], field: "name"),
        BadInput("name a number", ["name": 42], field: "name"),
        BadInput("name an array", ["name": ["acme"]], field: "name"),
        BadInput("name an object", ["name": ["first": "acme"]], field: "name"),
        BadInput("name 201 characters", ["name": .repeated("n", count: 201)], field: "name"),
        BadInput("name with NUL", ["name": "ac\u{0}me"], field: "name"),
        BadInput("unknown field", ["name": "acme", "nmae": "acme"], field: "nmae"),
        BadInput("unknown field apiKey", ["name": "acme", "apiKey": "fy_live_x"], field: "apiKey"),
        BadInput("quotas a string", ["name": "acme", "quotas": "lots"], field: "quotas"),
        BadInput("quotas an array", ["name": "acme", "quotas": []], field: "quotas"),
        BadInput("quotas unknown member", ["name": "acme", "quotas": ["burst": 5]], field: "quotas.burst"),
        BadInput("maxConcurrentTransfers 0", ["name": "acme", "quotas": ["maxConcurrentTransfers": 0]], field: "quotas.maxConcurrentTransfers"),
        BadInput("maxConcurrentTransfers negative", ["name": "acme", "quotas": ["maxConcurrentTransfers": -1]], field: "quotas.maxConcurrentTransfers"),
        BadInput("maxConcurrentTransfers a fraction", ["name": "acme", "quotas": ["maxConcurrentTransfers": 1.5]], field: "quotas.maxConcurrentTransfers"),
        BadInput("maxConcurrentTransfers a string", ["name": "acme", "quotas": ["maxConcurrentTransfers": "5"]], field: "quotas.maxConcurrentTransfers"),
        BadInput("maxConcurrentTransfers absurd", ["name": "acme", "quotas": ["maxConcurrentTransfers": 1e300]], field: "quotas.maxConcurrentTransfers"),
        BadInput("maxConcurrentTransfers over the cap", ["name": "acme", "quotas": ["maxConcurrentTransfers": 1_000_001]], field: "quotas.maxConcurrentTransfers"),
        BadInput("maxStoredBytes 0", ["name": "acme", "quotas": ["maxStoredBytes": 0]], field: "quotas.maxStoredBytes"),
        BadInput("maxStoredBytes beyond Int64", ["name": "acme", "quotas": ["maxStoredBytes": 1e19]], field: "quotas.maxStoredBytes"),
        BadInput("maxStoredBytes a boolean", ["name": "acme", "quotas": ["maxStoredBytes": true]], field: "quotas.maxStoredBytes"),
        BadInput("requestsPerSecond 0", ["name": "acme", "quotas": ["requestsPerSecond": 0]], field: "quotas.requestsPerSecond"),
        BadInput("requestsPerSecond negative", ["name": "acme", "quotas": ["requestsPerSecond": -5]], field: "quotas.requestsPerSecond"),
        BadInput("requestsPerSecond absurd", ["name": "acme", "quotas": ["requestsPerSecond": 1e7]], field: "quotas.requestsPerSecond"),
        BadInput("requestsPerSecond a string", ["name": "acme", "quotas": ["requestsPerSecond": "fast"]], field: "quotas.requestsPerSecond"),
        BadInput("maxTaskBytes negative", ["name": "acme", "quotas": ["maxTaskBytes": -1]], field: "quotas.maxTaskBytes"),
        BadInput("maxTaskBytes absurd", ["name": "acme", "quotas": ["maxTaskBytes": 1e30]], field: "quotas.maxTaskBytes"),
        BadInput("a trailing comma", raw: #"{"name":"acme",}"#),
        BadInput("name twice", raw: #"{"name":"acme","name":"other"}"#, field: "name"),
    ] + BadInput.malformedBodies

    @Test("refused", arguments: cases)
    func refuses(_ input: BadInput) async throws {
        try await APIHarness.run { api in
            try await input.expectRefused(.post, "/admin/v1/tenants", with: api.operatorClient, in: api)
        }
    }

    @Test("a body with every field set is accepted, and its quotas kept")
    func acceptsEveryField() async throws {
        try await APIHarness.run { api in
            let before = try await api.rowCounts()
            let body: JSONValue = [
                "name": "acme ☃",
                "quotas": ["maxConcurrentTransfers": 10, "maxStoredBytes": 1_000_000, "requestsPerSecond": 2.5, "maxTaskBytes": 4096],
            ]
            let tenant = try await api.operatorClient.createTenant(body)
            #expect(tenant.name == "acme ☃")
            #expect(tenant.id.hasPrefix("ten_"))
            #expect(tenant.apiKey?.hasPrefix("fy_live_") == true)
            #expect(tenant.quotas["maxConcurrentTransfers"] == 10)
            #expect(tenant.quotas["requestsPerSecond"] == 2.5)
            #expect(try await api.rowCounts().tenants == before.tenants + 1)
        }
    }

    @Test("PATCH: a quota given as null is lifted, an absent one kept")
    func quotaLifted() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.operatorClient.createTenant(["name": "acme", "quotas": ["maxStoredBytes": 1_000_000, "maxTaskBytes": 4096]])
            let patched = try await api.operatorClient.call(
                .patch, "/admin/v1/tenants/\(tenant.id)", json: ["quotas": ["maxStoredBytes": nil]], expecting: .ok, as: JSONValue.self
            )
            #expect(patched["quotas"]?["maxStoredBytes"] == nil || patched["quotas"]?["maxStoredBytes"] == .null)
            #expect(patched["quotas"]?["maxTaskBytes"] == 4096)
        }
    }
}
