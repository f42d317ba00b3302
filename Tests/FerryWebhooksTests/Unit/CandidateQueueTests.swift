import Testing

@testable import FerryStore
@testable import FerryWebhooks

@Suite("The heads a claim left, handed to delivery slots")
struct CandidateQueueTests {
    private func candidates(_ names: [String]) -> [DeliveryCandidate] {
        names.map { DeliveryCandidate(deliveryID: $0, endpointID: "whe_1", streamID: "tsk_\($0)", sequence: 1) }
    }

    @Test("handed out oldest first, a few at a time; those given back come first, in their order")
    func order() {
        var queue = CandidateQueue(candidates(["a", "b", "c", "d", "e"]))
        let first = queue.take(2)
        #expect(first.map(\.deliveryID) == ["a", "b"])
        let second = queue.take(2)
        #expect(second.map(\.deliveryID) == ["c", "d"])
        // The first slot looked at "a" only; the second at none.
        queue.giveBack(second[...])
        queue.giveBack(first.dropFirst())
        #expect(queue.take(2).map(\.deliveryID) == ["b", "c"])
        #expect(queue.take(5).map(\.deliveryID) == ["d", "e"])
        #expect(queue.take(5).isEmpty)
    }
}
