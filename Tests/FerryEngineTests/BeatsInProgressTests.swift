import FerryStore
import Synchronization
import Testing

@testable import FerryEngine

@Suite("An ended transfer waits for the heartbeat that took its snapshot to be queued")
struct BeatsInProgressTests {
    @Test("every end waits while the beat collects; then only those of transfers it took, until it is queued")
    func waitsForTheBeat() async throws {
        let beats = BeatsInProgress()
        let (inBeat, other) = (LeaseToken(taskID: "tsk_a", epoch: 1), LeaseToken(taskID: "tsk_b", epoch: 1))
        beats.collecting()
        let collected = Task { await beats.queued(other) }
        try await Task.sleep(for: .milliseconds(50))
        beats.took([inBeat])
        await collected.value
        let passed = Mutex(false)
        let waiter = Task {
            await beats.queued(inBeat)
            passed.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(100))
        let early = passed.withLock { $0 }
        #expect(!early, "the end went before the beat was queued")
        beats.end()
        await waiter.value
        let late = passed.withLock { $0 }
        #expect(late)
        // A later snapshot of the same lease is another beat's business.
        await beats.queued(inBeat)
    }
}
