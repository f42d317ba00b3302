import FerryCore
import FerryStore
import Testing

@testable import FerryEngine

@Suite("LedgerWriter.coalesce: transfers ending together share one transaction")
struct LedgerWriterCoalescingTests {
    private let first = LeaseToken(taskID: "tsk_first", epoch: 1)
    private let second = LeaseToken(taskID: "tsk_second", epoch: 1)

    private func lastWrite(_ lease: LeaseToken) -> OwnerEvent {
        OwnerEvent(lease: lease, type: .downloadTaskDidWriteData, data: ["totalBytesWritten": 1])
    }

    @Test("each end after its last events: one finish carrying every event, in order")
    func endsAfterEvents() {
        let merged = LedgerWriter.coalesce([
            .events([lastWrite(first)]), .finish([(first, .completed(TaskCompletion()))]),
            .events([lastWrite(second)]), .finish([(second, .completed(TaskCompletion()))]),
        ])
        #expect(merged.count == 1)
        guard case .finish(let outcomes, let events, _)? = merged.first else {
            Issue.record("expected one finish, got \(merged)")
            return
        }
        #expect(outcomes.map(\.lease) == [first, second])
        #expect(events.map(\.lease) == [first, second])
    }

    @Test("events written after another transfer's end join its transaction; cookies do not")
    func eventsAfterAnEnd() {
        let merged = LedgerWriter.coalesce([
            .finish([(first, .completed(TaskCompletion()))]), .events([lastWrite(second)]), .cookies([]),
        ])
        #expect(merged.count == 2)
        guard case .finish(_, let events, _)? = merged.first, case .cookies? = merged.last else {
            Issue.record("unexpected merge: \(merged)")
            return
        }
        #expect(events.map(\.lease) == [second])
    }

    @Test("a decision event joins the ends around it, and still waits for its claim")
    func decisionsJoinEnds() {
        let decision = OwnerEvent(lease: second, type: .dataTaskDidReceiveResponse, data: [:], id: "evt_decision")
        let asking = LedgerWriter.AskingDecision(decision: AskedDecision(eventID: "evt_decision", taskID: second.taskID)) { _ in }
        let merged = LedgerWriter.coalesce([
            .finish([(first, .completed(TaskCompletion()))]), .events([decision], asking: [asking]),
        ])
        #expect(merged.count == 1)
        guard case .finish(_, let events, let waiting)? = merged.first else {
            Issue.record("expected one finish, got \(merged)")
            return
        }
        #expect(events.map(\.id) == ["evt_decision"])
        #expect(waiting.map(\.decision.eventID) == ["evt_decision"])
    }
}
