import Testing

@testable import FerryEngine

@Suite("When the heartbeat checkpoints a download")
struct CheckpointScheduleTests {
    @Test("a few MiB at once, whenever they arrive")
    func manyBytes() {
        #expect(TransferEngine.isCheckpointDue(fresh: 4 * 1024 * 1024, since: .milliseconds(10)))
        #expect(!TransferEngine.isCheckpointDue(fresh: 4 * 1024 * 1024 - 1, since: .seconds(1)))
    }

    @Test("every two seconds while a transfer moves at least 64 KiB in them")
    func everyTwoSeconds() {
        #expect(TransferEngine.isCheckpointDue(fresh: 64 * 1024, since: .seconds(2)))
        #expect(!TransferEngine.isCheckpointDue(fresh: 64 * 1024 - 1, since: .seconds(2)))
    }

    @Test("a trickle waits, but never more than half a minute; nothing new, no checkpoint")
    func trickle() {
        #expect(!TransferEngine.isCheckpointDue(fresh: 8 * 1024, since: .seconds(29)))
        #expect(TransferEngine.isCheckpointDue(fresh: 1, since: .seconds(30)))
        #expect(!TransferEngine.isCheckpointDue(fresh: 0, since: .seconds(300)))
    }
}
