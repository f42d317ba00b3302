import Testing

@testable import FerryWebhooks

@Suite("Endpoints the last claim found full: what wakes the delivery loop")
struct FullEndpointsTests {
    @Test("new deliveries for full endpoints alone do not call for a claim; one for another endpoint does")
    func newDeliveries() {
        let full = FullEndpoints()
        #expect(full.callForClaim(newDeliveriesFor: ["whe_a"]))
        full.claimed(full: ["whe_a", "whe_b"], since: full.generation)
        #expect(!full.callForClaim(newDeliveriesFor: ["whe_a"]))
        #expect(!full.callForClaim(newDeliveriesFor: ["whe_a", "whe_b"]))
        #expect(full.callForClaim(newDeliveriesFor: ["whe_a", "whe_c"]))
        full.claimed(full: [], since: full.generation)
        #expect(full.callForClaim(newDeliveriesFor: ["whe_a"]))
    }

    @Test("room freed calls for a claim of every endpoint")
    func roomFreed() {
        let full = FullEndpoints()
        full.claimed(full: ["whe_a", "whe_b"], since: full.generation)
        full.roomFreed()
        #expect(full.callForClaim(newDeliveriesFor: ["whe_b"]))
    }

    @Test("room freed while a claim ran: what it found full may have room now")
    func roomFreedDuringAClaim() {
        let full = FullEndpoints()
        let generation = full.generation
        full.roomFreed()
        full.claimed(full: ["whe_a"], since: generation)
        #expect(full.callForClaim(newDeliveriesFor: ["whe_a"]))
    }

    @Test("what a claim found full is trusted for a moment only: room freed elsewhere rings nothing here")
    func trustedForAMoment() {
        let full = FullEndpoints()
        full.claimed(full: ["whe_a"], since: full.generation)
        #expect(!full.callForClaim(newDeliveriesFor: ["whe_a"]))
        #expect(full.callForClaim(newDeliveriesFor: ["whe_a"], now: .now + FullEndpoints.trustedFor))
    }
}
