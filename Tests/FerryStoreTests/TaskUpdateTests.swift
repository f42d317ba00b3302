import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("TaskStore.update: a changed priority reorders the waiting tasks")
struct TaskUpdateTests {
    @Test("the task raised above the others is claimed first; one lowered below them last")
    func priorityReordersClaims() async throws {
        try await StoreFixture.with { fixture in
            let first = try await fixture.makeTask()
            let second = try await fixture.makeTask()
            let third = try await fixture.makeTask()
            _ = try await fixture.tasks.update(tenantID: fixture.tenant.id, taskID: third.id, TaskUpdate(priority: 0.9))
            _ = try await fixture.tasks.update(tenantID: fixture.tenant.id, taskID: first.id, TaskUpdate(priority: 0.1))
            let ledger = fixture.ledger()
            var order: [String] = []
            for _ in 0..<3 { order += try await ledger.claim(limit: 1).map(\.taskID) }
            #expect(order == [third.id, second.id, first.id])
        }
    }

    @Test("another tenant's task is not found and not changed")
    func tenantScoped() async throws {
        try await StoreFixture.with { fixture in
            let task = try await fixture.makeTask(starts: false)
            let other = try await fixture.makeTenant()
            await #expect(throws: StoreError.notFound(resource: "task")) {
                _ = try await fixture.tasks.update(tenantID: other.id, taskID: task.id, TaskUpdate(priority: 1))
            }
            #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).priority == 0.5)
        }
    }
}
