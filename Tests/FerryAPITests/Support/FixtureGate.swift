/// Bounds how many API fixtures (each a database, a pool and a LISTEN connection) exist at once.
///
/// Swift Testing starts every parameterised case at the same time; without a bound a few hundred
/// cases would open more connections than the shared test PostgreSQL accepts.
actor FixtureGate {
    static let shared = FixtureGate(permits: 6)

    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(permits: Int) {
        available = permits
    }

    /// Runs `body` once a permit is free, and frees it afterwards whatever happens.
    nonisolated func withPermit<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    private func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            available += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
