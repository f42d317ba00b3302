import Synchronization

/// Requests that arrive together share one call of `perform`: while one batch is being served,
/// the next requests queue, and the server then takes everything queued at once. Small
/// downloads start and end by the hundred per second, each with a URL cache lookup before and
/// a response to cache after; one statement per batch instead of one per transfer.
final class CoalescingQueue<Input: Sendable, Output: Sendable>: Sendable {
    private struct Waiting {
        var input: Input
        var continuation: CheckedContinuation<Output, any Error>
    }

    /// Answers every input of a batch, in order.
    private let perform: @Sendable ([Input]) async throws -> [Output]
    /// How long the server waits for more before serving a batch: zero for callers who wait on
    /// the answer, more where nobody does and fewer, larger batches are worth the delay.
    private let lingering: Duration
    private let state = Mutex<(waiting: [Waiting], isServing: Bool)>(([], false))

    init(lingering: Duration = .zero, perform: @escaping @Sendable ([Input]) async throws -> [Output]) {
        self.lingering = lingering
        self.perform = perform
    }

    func callAsFunction(_ input: Input) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let startsServer = state.withLock { state in
                state.waiting.append(Waiting(input: input, continuation: continuation))
                guard !state.isServing else { return false }
                state.isServing = true
                return true
            }
            // The server lives only while there is something to serve; every input it takes is
            // awaited by its caller, so it never outlives them.
            if startsServer { Task { await self.serveWhileWaiting() } }
        }
    }

    private func serveWhileWaiting() async {
        while true {
            if lingering > .zero { try? await Task.sleep(for: lingering) }
            let batch = state.withLock { state in
                let batch = state.waiting
                state.waiting.removeAll()
                if batch.isEmpty { state.isServing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                let outputs = try await perform(batch.map(\.input))
                precondition(outputs.count == batch.count, "a coalesced call answers once per input")
                for (waiting, output) in zip(batch, outputs) { waiting.continuation.resume(returning: output) }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
