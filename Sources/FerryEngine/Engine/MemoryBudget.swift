import FerryCore
import Synchronization

/// The process-wide bound on what transfers hold in memory (`FERRY_MEMORY_BUDGET_BYTES`): data
/// tasks' bodies, which are kept whole until they are written to the database. One data task
/// may keep up to `FERRY_MAX_DATA_TASK_BYTES`, and thousands run at once; without a shared
/// bound their sum had none. A data task whose next bytes do not fit fails with -1103 saying
/// so, rather than the process running out of memory for every tenant.
///
/// No tenant takes it all: the second half of the budget goes only to tenants holding less than
/// a quarter of it, or nothing yet (`take`). One tenant's slow origins announcing 16 MiB bodies
/// could otherwise hold the whole budget for as long as their transfers last, and every other
/// tenant's data tasks failed at once. A tenant alone on the instance can still hold half, or
/// one body of any size that fits the budget.
public final class MemoryBudget: Sendable {
    public let capacity: Int
    /// Bytes held, in all and by tenant (the latter only for tenants holding some).
    private let used = Mutex<(total: Int, byTenant: [String: Int])>((0, [:]))

    public static let defaultCapacity = 384 * 1024 * 1024

    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Bytes held now.
    public var usedBytes: Int { used.withLock { $0.total } }

    /// Bytes `tenantID`'s transfers hold now.
    func usedBytes(ofTenant tenantID: String) -> Int { used.withLock { $0.byTenant[tenantID] ?? 0 } }

    /// Takes `bytes` for `tenantID` if they fit: within the budget, and past its first half only
    /// while the tenant holds less than a quarter, or nothing yet (so that one body larger than
    /// a quarter still fits an idle instance).
    func take(_ bytes: Int, forTenant tenantID: String) -> Bool {
        guard bytes > 0 else { return true }
        return used.withLock { used in
            let tenant = used.byTenant[tenantID] ?? 0
            guard used.total + bytes <= capacity,
                  used.total + bytes <= capacity / 2 || tenant + bytes <= capacity / 4 || tenant == 0
            else { return false }
            used.total += bytes
            used.byTenant[tenantID] = tenant + bytes
            return true
        }
    }

    func give(_ bytes: Int, ofTenant tenantID: String) {
        guard bytes > 0 else { return }
        used.withLock { used in
            used.total -= bytes
            let left = (used.byTenant[tenantID] ?? 0) - bytes
            used.byTenant[tenantID] = left > 0 ? left : nil
        }
    }

    /// How a data task whose body does not fit ends (-1103), saying why.
    func spent(failingURL: String) -> TransferError {
        TransferError(
            code: .dataLengthExceedsMaximum, failingURL: failingURL,
            reason: "Ferry's memory for data-task bodies (\(capacity / (1024 * 1024)) MiB, shared by all transfers, each tenant held to its share) is in use; retry later, or use a download task"
        )
    }

    /// What one transfer (of `tenantID`) holds; given back when the last reference goes (the
    /// transfer's end has been handed to the writer by then).
    final class Reservation: Sendable {
        let budget: MemoryBudget
        let tenantID: String
        private let held = Atomic<Int>(0)

        init(budget: MemoryBudget, tenantID: String) {
            self.budget = budget
            self.tenantID = tenantID
        }

        var heldBytes: Int { held.load(ordering: .relaxed) }

        func grow(by bytes: Int) -> Bool {
            guard budget.take(bytes, forTenant: tenantID) else { return false }
            held.add(bytes, ordering: .relaxed)
            return true
        }

        deinit {
            budget.give(held.load(ordering: .relaxed), ofTenant: tenantID)
        }
    }
}
