import Synchronization

/// The operator token's hash as this process last read it from `settings`, shared by its
/// stores (`FerryDatabase`). The operator's requests, `/metrics` scraped every few seconds above
/// all, are checked without a query each; past `freshness` the hash is read again in the
/// background while the request goes on with the one read before, so a scrape never waits for a
/// database that is away, when an operator most needs the figures.
public final class AdminTokenMemory: Sendable {
    enum Lookup: Equatable {
        /// Read within `freshness` (nil: no token is stored).
        case fresh([UInt8]?)
        /// Read before: stands until a read answers otherwise.
        case stale([UInt8]?)
        /// Never read (or forgotten): the caller reads, and waits.
        case unknown
    }

    private struct Memory {
        var hash: [UInt8]?
        var readAt: ContinuousClock.Instant
        var isRefreshing = false
    }

    private let memory = Mutex<Memory?>(nil)
    /// How long a read stands before the next is started: a token rotated by another instance's
    /// start is refused here, and the new one accepted, from the first request after this.
    let freshness: Duration

    public init(freshness: Duration = .seconds(5)) {
        self.freshness = freshness
    }

    func lookup(now: ContinuousClock.Instant = .now) -> Lookup {
        memory.withLock { memory in
            guard let memory else { return .unknown }
            return now - memory.readAt < freshness ? .fresh(memory.hash) : .stale(memory.hash)
        }
    }

    /// Whether the caller is the one to read again (one read at a time).
    func beginRefresh() -> Bool {
        memory.withLock { memory in
            guard memory != nil, memory?.isRefreshing == false else { return false }
            memory?.isRefreshing = true
            return true
        }
    }

    func remember(_ hash: [UInt8]?, now: ContinuousClock.Instant = .now) {
        memory.withLock { $0 = Memory(hash: hash, readAt: now) }
    }

    /// A read that failed: while the database is unreachable the hash read before stands (and
    /// the next request tries again); any other failure (a query refused, a row unreadable)
    /// forgets it, so that the next check reads, and fails, rather than trust it for good.
    func refreshFailed(databaseUnreachable: Bool) {
        memory.withLock { memory in
            if databaseUnreachable { memory?.isRefreshing = false } else { memory = nil }
        }
    }

    func forget() {
        memory.withLock { $0 = nil }
    }
}
