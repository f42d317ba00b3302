import FerryStore
import Synchronization

/// Puts into the URL cache from transfers that end together share a transaction: while one is
/// written, the next ones queue, and the writer then stores everything queued at once. Small
/// downloads end by the hundred per second, each with a response to cache.
final class CachePutQueue: Sendable {
    private struct Waiting {
        var put: CacheStore.Put
        var continuation: CheckedContinuation<[String], any Error>
    }

    private let store: CacheStore
    private let capacity: Int64
    private let state = Mutex<(waiting: [Waiting], isWriting: Bool)>(([], false))

    init(store: CacheStore, capacity: Int64) {
        self.store = store
        self.capacity = capacity
    }

    /// Stores the entry (see `CacheStore.put`); returns the body keys it dropped.
    func put(_ put: CacheStore.Put) async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            let startsWriter = state.withLock { state in
                state.waiting.append(Waiting(put: put, continuation: continuation))
                guard !state.isWriting else { return false }
                state.isWriting = true
                return true
            }
            // The writer lives only while there is something to write; every put it takes is
            // awaited by its caller, so it never outlives them.
            if startsWriter { Task { await self.writeWhileWaiting() } }
        }
    }

    private func writeWhileWaiting() async {
        while true {
            let batch = state.withLock { state in
                let batch = state.waiting
                state.waiting.removeAll()
                if batch.isEmpty { state.isWriting = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                let dropped = try await store.put(batch.map(\.put), capacity: capacity)
                precondition(dropped.count == batch.count, "CacheStore.put answers once per put")
                for (waiting, keys) in zip(batch, dropped) { waiting.continuation.resume(returning: keys) }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
