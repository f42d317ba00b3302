import Synchronization

/// The operator token's hash as this process last read it from `settings`, shared by its
/// stores (`FerryDatabase`). The operator's requests, `/metrics` scraped every few seconds above
/// all, are checked without a query each; and while PostgreSQL is away, when an operator most
/// needs them, the token last read still opens them.
public final class AdminTokenMemory: Sendable {
    private let last = Mutex<(hash: [UInt8]?, readAt: ContinuousClock.Instant)?>(nil)
    /// How long a read stands: a token rotated by another instance's start is refused here,
    /// and the new one accepted, within this.
    let freshness: Duration

    public init(freshness: Duration = .seconds(5)) {
        self.freshness = freshness
    }

    /// The hash read within `freshness` (nil inside: no token was stored), or nil when none was.
    func fresh(now: ContinuousClock.Instant = .now) -> [UInt8]?? {
        last.withLock { last in
            guard let last, now - last.readAt < freshness else { return nil }
            return .some(last.hash)
        }
    }

    /// The hash last read, however long ago.
    var lastRead: [UInt8]? {
        last.withLock { $0?.hash }
    }

    func remember(_ hash: [UInt8]?, now: ContinuousClock.Instant = .now) {
        last.withLock { $0 = (hash, now) }
    }

    func forget() {
        last.withLock { $0 = nil }
    }
}
