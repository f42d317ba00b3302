import Testing

@testable import FerryWebhooks

@Suite("Endpoints the last claim found full: which new deliveries wake the delivery loop")
struct FullEndpointsTests {
    @Test("new deliveries for full endpoints alone do not call for a claim; one for another endpoint does")
    func newDeliveries() {
        let full = FullEndpoints()
        #expect(full.callForClaim(newDeliveriesFor: ["whe_a"]))
        full.claimed(leaving: ["whe_a", "whe_b"])
        #expect(!full.callForClaim(newDeliveriesFor: ["whe_a"]))
        #expect(!full.callForClaim(newDeliveriesFor: ["whe_a", "whe_b"]))
        #expect(full.callForClaim(newDeliveriesFor: ["whe_a", "whe_c"]))
        // A claim that left nothing (or took all it could) found no endpoint full.
        full.claimed(leaving: [])
        #expect(full.callForClaim(newDeliveriesFor: ["whe_a"]))
    }

    @Test("room freed on a full endpoint, or anywhere, calls for a claim; on another endpoint it does not")
    func roomFreed() {
        let full = FullEndpoints()
        full.claimed(leaving: ["whe_a", "whe_b"])
        #expect(!full.roomFreed(on: "whe_c"))
        #expect(!full.callForClaim(newDeliveriesFor: ["whe_b"]))
        #expect(full.roomFreed(on: "whe_a"))
        // The claim that follows ranks every endpoint again: none counts as full until it has.
        #expect(full.callForClaim(newDeliveriesFor: ["whe_b"]))
        full.claimed(leaving: ["whe_b"])
        #expect(full.roomFreed())
        #expect(full.callForClaim(newDeliveriesFor: ["whe_b"]))
    }
}
