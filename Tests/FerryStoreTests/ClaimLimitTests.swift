import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("TransferLedger.claim: connection and tenant limits hold across instances")
struct ClaimLimitTests {
    private func session(_ fixture: StoreFixture, connectionsPerHost: Int, tenantID: String? = nil) async throws -> SessionRecord {
        var configuration = SessionConfiguration(kind: .default)
        configuration.httpMaximumConnectionsPerHost = connectionsPerHost
        return try await fixture.database.sessions.create(tenantID: tenantID ?? fixture.tenant.id, SessionCreation(configuration: configuration)).session
    }

    @Test("an instance alone on a host holds four times its connection limit; others claim only below the limit")
    func perHostLimit() async throws {
        try await StoreFixture.with(poolSize: 6) { fixture in
            let limited = try await session(fixture, connectionsPerHost: 2)
            var sameHost: [String] = []
            for index in 0..<10 { sameHost.append(try await fixture.makeTask(session: limited, url: "https://Same.example/\(index)").id) }
            let elsewhere = try await fixture.makeTask(session: limited, url: "https://other.example/x")

            let ledgers = (0..<4).map { fixture.ledger("instance-\($0)") }
            let claimed = try await withThrowingTaskGroup(of: [ClaimedTask].self) { group in
                for ledger in ledgers { group.addTask { try await ledger.claim(limit: 10) } }
                return try await group.reduce(into: [ClaimedTask]()) { $0 += $1 }
            }
            let ids = Set(claimed.map(\.taskID))
            #expect(ids.contains(elsewhere.id))
            // Oldest first within the host, all to the instance that claimed first.
            #expect(ids.intersection(sameHost) == Set(sameHost.prefix(8)))
            var owners: Set<String> = []
            for id in sameHost.prefix(8) { owners.insert(try await fixture.column("lease_owner", of: id, as: String.self)) }
            #expect(owners.count == 1)
            let owner = try #require(owners.first)
            let other = try #require(ledgers.first { $0.instanceID != owner })
            #expect(try await other.claim(limit: 10).isEmpty)

            // A transfer ends: seven leases are still at least the limit for anyone else, and
            // below four times the limit for the owner.
            let done = try #require(claimed.first { $0.taskID == sameHost[0] })
            let lost = try await fixture.ledger(owner).finish([(LeaseToken(taskID: done.taskID, epoch: done.leaseEpoch), .completed(TaskCompletion()))])
            #expect(lost.isEmpty)
            #expect(try await other.claim(limit: 10).isEmpty)
            #expect(try await fixture.ledger(owner).claim(limit: 10).map(\.taskID) == [sameHost[8]])
        }
    }

    @Test("two instances on one host share its connection limit")
    func sharedHost() async throws {
        try await StoreFixture.with { fixture in
            let limited = try await session(fixture, connectionsPerHost: 2)
            var tasks: [String] = []
            for index in 0..<5 { tasks.append(try await fixture.makeTask(session: limited, url: "https://same.example/\(index)").id) }
            #expect(try await fixture.ledger("a").claim(limit: 1).map(\.taskID) == [tasks[0]])
            #expect(try await fixture.ledger("b").claim(limit: 10).map(\.taskID) == [tasks[1]])
            #expect(try await fixture.ledger("a").claim(limit: 10).isEmpty)
            #expect(try await fixture.ledger("b").claim(limit: 10).isEmpty)
        }
    }

    @Test("a tenant's maxConcurrentTransfers counts its live transfers on every instance")
    func perTenantLimit() async throws {
        try await StoreFixture.with { fixture in
            try await fixture.execute("UPDATE tenants SET max_concurrent_transfers = 3 WHERE id = $1", [fixture.tenant.id])
            for _ in 0..<6 { _ = try await fixture.makeTask() }
            let other = try await fixture.makeTenant()
            let theirSession = try await fixture.makeSession(tenantID: other.id)
            let theirs = try await fixture.makeTask(session: theirSession, tenantID: other.id)

            let first = try await fixture.ledger("a").claim(limit: 10)
            #expect(first.filter { $0.tenantID == fixture.tenant.id }.count == 3)
            #expect(first.contains { $0.taskID == theirs.id })
            #expect(try await fixture.ledger("b").claim(limit: 10).isEmpty)
        }
    }

    @Test("a task held back by its host does not use up a slot of its tenant's limit")
    func hostLimitDoesNotConsumeTenantSlots() async throws {
        try await StoreFixture.with { fixture in
            try await fixture.execute("UPDATE tenants SET max_concurrent_transfers = 2 WHERE id = $1", [fixture.tenant.id])
            let limited = try await session(fixture, connectionsPerHost: 1)
            let first = try await fixture.makeTask(session: limited, url: "https://busy.example/1")
            _ = try await fixture.makeTask(session: limited, url: "https://busy.example/2")
            let free = try await fixture.makeTask(session: limited, url: "https://free.example/1")
            let claimed = Set(try await fixture.ledger().claim(limit: 10).map(\.taskID))
            #expect(claimed.contains(first.id))
            #expect(claimed == [first.id, free.id])
        }
    }

    @Test("a suspended tenant's tasks are not claimed")
    func suspendedTenant() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask()
            try await fixture.execute("UPDATE tenants SET status = 'suspended' WHERE id = $1", [fixture.tenant.id])
            #expect(try await fixture.ledger().claim(limit: 10).isEmpty)
            try await fixture.execute("UPDATE tenants SET status = 'active' WHERE id = $1", [fixture.tenant.id])
            #expect(try await fixture.ledger().claim(limit: 10).map(\.taskID) == [task.id])
        }
    }
}
