import Synchronization

/// The operator token's hash as this process last read it from `settings`, shared by its
/// stores (`FerryDatabase`). The operator's requests, `/metrics` scraped every few seconds above
/// all, are checked against it without a query each, and so still while PostgreSQL is away,
/// when an operator most needs the figures. `SettingsStore.refreshAdminToken()`, run every few
/// seconds by the serving process, keeps it current: a token rotated by another instance's
/// start is refused here, and the new one accepted, from the next refresh on.
public final class AdminTokenMemory: Sendable {
    /// Read (nil inside: no token is stored), or never read.
    private let hash = Mutex<[UInt8]??>(nil)

    public init() {}

    /// What was read, or nil when nothing was: the caller reads, and waits.
    var lastRead: [UInt8]?? {
        hash.withLock { $0 }
    }

    func remember(_ read: [UInt8]?) {
        hash.withLock { $0 = .some(read) }
    }

    func forget() {
        hash.withLock { $0 = nil }
    }
}
