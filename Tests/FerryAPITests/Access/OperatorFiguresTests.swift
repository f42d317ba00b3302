import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// What counts every tenant's work is the operator's: a tenant must not count another's.
@Suite("Figures of every tenant's work are the operator's")
struct OperatorFiguresTests {
    @Test("/metrics takes the operator token; /readyz shows the disk's figures only to the operator")
    func metricsAndReadiness() async throws {
        let disk = UploadDiskReserveTests.SimulatedDisk(free: 5 << 20)
        try await APIHarness.runFresh(diskSpace: disk.space) { api in
            let tenant = try await api.makeTenant()
            expectProblem(try await api.anonymousClient.send(.get, "/metrics"), status: .unauthorized)
            expectProblem(try await tenant.send(.get, "/metrics"), status: .unauthorized)
            let metrics = try await api.operatorClient.send(.get, "/metrics")
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains("ferry_test_series 1"))

            for client in [api.anonymousClient, tenant] {
                let readiness = try JSONValue.parse(try await client.send(.get, "/readyz").body)
                #expect(readiness["disk"] == ["isBelowReserve": false], "\(readiness)")
            }
            let readiness = try JSONValue.parse(try await api.operatorClient.send(.get, "/readyz").body)
            #expect(readiness["disk"]?["freeBytes"] == .number(Double(5 << 20)))
            #expect(readiness["disk"]?["reserveBytes"] == .number(Double(UploadDiskReserveTests.SimulatedDisk.reserve)))
        }
    }

    @Test("while PostgreSQL is away: /metrics still answers the operator, and other requests get 503 with Retry-After, not 500")
    func databaseAway() async throws {
        try await APIHarness.runFresh { api in
            let tenant = try await api.makeTenant()
            let name = try await api.database.pool.withConnection { connection in
                try connection.query("SELECT current_database()").firstRow().decode(0, as: String.self)
            }
            try await TestDatabase.beginOutage(ofDatabaseNamed: name)
            let metrics = try await api.operatorClient.send(.get, "/metrics")
            let sessions = try await tenant.send(.get, "/v1/sessions")
            let tenants = try await api.operatorClient.send(.get, "/admin/v1/tenants")
            try await TestDatabase.endOutage(ofDatabaseNamed: name)
            #expect(metrics.status == .ok)
            for reply in [sessions, tenants] {
                expectProblem(reply, status: .serviceUnavailable)
                #expect(reply.headers[.retryAfter] == "5")
            }
        }
    }

    @Test("request ids are random: two of a tenant's answers do not tell how many requests came between")
    func requestIDs() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            var ids: [String] = []
            for _ in 0..<5 {
                ids.append(try #require(try await tenant.send(.get, "/v1/sessions").requestID))
            }
            #expect(ids.allSatisfy { $0.hasPrefix("req_") }, "\(ids)")
            // A counter's ids share all but their last digits; random ones hardly a character.
            let shared = zip(ids, ids.dropFirst()).map { a, b in zip(a.dropFirst(4), b.dropFirst(4)).prefix { $0 == $1 }.count }
            #expect(shared.allSatisfy { $0 < 6 }, "\(ids)")
        }
    }
}
