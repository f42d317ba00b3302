import FerryCore
import Synchronization

/// The process-wide bound on what transfers hold in memory (`FERRY_MEMORY_BUDGET_BYTES`): data
/// tasks' bodies, which are kept whole until they are written to the database. One data task
/// may keep up to `FERRY_MAX_DATA_TASK_BYTES`, and thousands run at once; without a shared
/// bound their sum had none. A data task whose next bytes do not fit fails with -1103 saying
/// so, rather than the process running out of memory for every tenant.
public final class MemoryBudget: Sendable {
    public let capacity: Int
    private let used = Atomic<Int>(0)

    public static let defaultCapacity = 384 * 1024 * 1024

    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Bytes held now.
    public var usedBytes: Int { used.load(ordering: .relaxed) }

    /// Takes `bytes` if they fit.
    func take(_ bytes: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + bytes <= capacity else { return false }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + bytes, successOrdering: .relaxed, failureOrdering: .relaxed
            )
            if exchanged { return true }
            current = original
        }
    }

    func give(_ bytes: Int) {
        used.subtract(bytes, ordering: .relaxed)
    }

    /// How a data task whose body does not fit ends (-1103), saying why.
    func spent(failingURL: String) -> TransferError {
        TransferError(
            code: .dataLengthExceedsMaximum, failingURL: failingURL,
            reason: "Ferry's memory for data-task bodies (\(capacity / (1024 * 1024)) MiB, shared by all transfers) is in use; retry later, or use a download task"
        )
    }

    /// What one transfer holds; given back when the last reference goes (the transfer's end has
    /// been handed to the writer by then).
    final class Reservation: Sendable {
        let budget: MemoryBudget
        private let held = Atomic<Int>(0)

        init(budget: MemoryBudget) {
            self.budget = budget
        }

        var heldBytes: Int { held.load(ordering: .relaxed) }

        func grow(by bytes: Int) -> Bool {
            guard budget.take(bytes) else { return false }
            held.add(bytes, ordering: .relaxed)
            return true
        }

        deinit {
            budget.give(held.load(ordering: .relaxed))
        }
    }
}
