import Synchronization

/// Whether any call of a unit of work (an API request) reached the server: the caller binds one
/// (`ServerContact.$current`) around the work, and the pool marks it when one of the work's calls
/// gets its connection. When a later call then fails to connect, what the earlier ones did may
/// stand; when none reached the server, nothing of the work was done.
public final class ServerContact: Sendable {
    @TaskLocal public static var current: ServerContact?

    private let reached = Atomic<Bool>(false)

    public init() {}

    public var hasReachedServer: Bool { reached.load(ordering: .acquiring) }

    func markReached() {
        reached.store(true, ordering: .releasing)
    }
}
