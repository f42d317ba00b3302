import Testing

@testable import FerryEngine

/// One tenant's data tasks cannot hold the whole memory budget (see `MemoryBudget`).
@Suite("The memory budget's share per tenant")
struct MemoryBudgetShareTests {
    @Test("one tenant holds at most half; past half, only tenants below a quarter take more")
    func fairShare() {
        let budget = MemoryBudget(capacity: 1000)
        #expect(budget.take(500, forTenant: "hog"))
        #expect(!budget.take(1, forTenant: "hog"), "past half, and it holds more than a quarter")
        #expect(budget.take(250, forTenant: "b"))
        #expect(!budget.take(1, forTenant: "b"))
        #expect(budget.take(250, forTenant: "c"))
        #expect(!budget.take(1, forTenant: "d"), "the budget is spent")
        budget.give(500, ofTenant: "hog")
        #expect(budget.usedBytes == 500)
        #expect(budget.usedBytes(ofTenant: "hog") == 0)
        #expect(budget.take(250, forTenant: "hog"), "past half, but below a quarter again")
    }

    @Test("a tenant holding nothing may take one body past half, as large as the budget has room for")
    func firstBodyOfAnySize() {
        let budget = MemoryBudget(capacity: 1000)
        #expect(budget.take(700, forTenant: "a"))
        #expect(!budget.take(1, forTenant: "a"))
        #expect(budget.take(300, forTenant: "b"))
        #expect(!budget.take(1, forTenant: "c"), "the budget is spent")
        #expect(budget.take(0, forTenant: "c"), "nothing to hold")
        #expect(budget.usedBytes(ofTenant: "c") == 0)
    }

    @Test("a transfer's reservation gives its tenant's share back when it goes")
    func reservations() {
        let budget = MemoryBudget(capacity: 1000)
        do {
            let reservation = MemoryBudget.Reservation(budget: budget, tenantID: "a")
            #expect(reservation.grow(by: 300))
            #expect(reservation.grow(by: 200))
            #expect(!reservation.grow(by: 1))
            #expect(budget.usedBytes(ofTenant: "a") == 500)
        }
        #expect(budget.usedBytes == 0)
        #expect(budget.usedBytes(ofTenant: "a") == 0)
    }
}
