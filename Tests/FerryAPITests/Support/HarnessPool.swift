import Testing

/// A few long-lived harnesses lent to a suite's test cases one case at a time.
///
/// Copying a database from the template costs most of a second, and the validation tables have
/// hundreds of cases; lending a case a harness of its own for its duration keeps every
/// before/after row count exact (nothing else writes meanwhile) at a fraction of the cost.
/// Every case makes its own tenant, so cases see nothing of each other through the API.
actor HarnessPool {
    @TaskLocal static var current: HarnessPool?

    private var idle: [APIHarness] = []
    private var borrowers: [CheckedContinuation<APIHarness, any Error>] = []
    private var lenders: [CheckedContinuation<Void, Never>] = []
    private var isClosed = false
    /// Why a harness could not be made; borrowers then fail instead of waiting forever.
    private var failure: (any Error)?

    /// Runs `body` with a harness no other case uses meanwhile.
    func borrow<T: Sendable>(_ body: @Sendable (APIHarness) async throws -> T) async throws -> T {
        let harness = try await take()
        do {
            let result = try await body(harness)
            giveBack(harness)
            return result
        } catch {
            giveBack(harness)
            throw error
        }
    }

    /// Offers `harness` until the pool closes; its owner tears it down afterwards.
    func lend(_ harness: APIHarness) async {
        guard !isClosed else { return }
        giveBack(harness)
        await withCheckedContinuation { lenders.append($0) }
    }

    /// A harness could not be made: every borrower, waiting or to come, gets the error.
    func fail(_ error: any Error) {
        failure = error
        for borrower in borrowers { borrower.resume(throwing: error) }
        borrowers = []
    }

    /// Ends lending: every lender returns.
    func close() {
        isClosed = true
        for lender in lenders { lender.resume() }
        lenders = []
    }

    private func take() async throws -> APIHarness {
        if let harness = idle.popLast() { return harness }
        if let failure { throw failure }
        return try await withCheckedThrowingContinuation { borrowers.append($0) }
    }

    private func giveBack(_ harness: APIHarness) {
        if borrowers.isEmpty {
            idle.append(harness)
        } else {
            borrowers.removeFirst().resume(returning: harness)
        }
    }
}

/// `@Suite(.sharedHarnesses)`: the suite's cases borrow from a pool of `count` harnesses that
/// live as long as the suite runs, instead of each making its own database.
struct SharedHarnessesTrait: SuiteTrait, TestScoping {
    var count: Int

    var isRecursive: Bool { false }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite ? self : nil
    }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let pool = HarnessPool()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do {
                        try await APIHarness.runFresh { harness in await pool.lend(harness) }
                    } catch {
                        await pool.fail(error)
                        throw error
                    }
                }
            }
            do {
                try await HarnessPool.$current.withValue(pool) { try await function() }
            } catch {
                await pool.close()
                throw error
            }
            await pool.close()
            try await group.waitForAll()
        }
    }
}

extension Trait where Self == SharedHarnessesTrait {
    /// Two harnesses shared by the suite's cases.
    static var sharedHarnesses: Self { SharedHarnessesTrait(count: 2) }
}
