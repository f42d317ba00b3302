import FerryStore
import Hummingbird
import Synchronization

/// What the instance's event streams (`GET /v1/events/stream`) share: a bound on how many one
/// tenant may hold open, and one event horizon for all of them.
///
/// Every open stream costs database reads whenever its tenant's events arrive. Unbounded, one
/// tenant opening streams by the hundred drained the connection pool for everyone. The bound
/// is per instance (each instance counts its own streams), like the request rate.
public final class EventStreams: Sendable {
    /// Streams one tenant may hold open on one instance (`FERRY_MAX_EVENT_STREAMS`).
    public static let defaultMaximumPerTenant = 8

    public let maximumPerTenant: Int
    /// How often an open stream asks whether its key still admits it (`EventStream`).
    public let accessCheckInterval: Duration
    let horizon: SharedEventHorizon
    let reads = ReadCounter()
    private let open = Mutex<[String: Int]>([:])

    public init(
        events: EventLogStore, maximumPerTenant: Int = EventStreams.defaultMaximumPerTenant, accessCheckInterval: Duration = .seconds(15)
    ) {
        self.maximumPerTenant = max(1, maximumPerTenant)
        self.accessCheckInterval = accessCheckInterval
        self.horizon = SharedEventHorizon(events: events, reads: reads)
    }

    /// Database reads the streams made (horizon rounds and event batches): for tests and the
    /// curious, to see that waking streams stays cheap.
    public var databaseReads: Int { reads.count }

    /// A place for one more stream of `tenantID`, held until the slot is released (when the
    /// stream's response is gone); a 429 problem when the tenant holds its maximum.
    func admit(tenantID: String) throws -> EventStreamSlot {
        let admitted = open.withLock { open -> Bool in
            let count = open[tenantID, default: 0]
            guard count < maximumPerTenant else { return false }
            open[tenantID] = count + 1
            return true
        }
        guard admitted else {
            var problem = APIError(
                status: .tooManyRequests, slug: "too-many-event-streams", title: "Too many event streams.",
                detail: "A tenant may hold at most \(maximumPerTenant) event streams open at once on an instance; close one, or retry after 5 s."
            )
            problem.headers[.retryAfter] = "5"
            throw problem
        }
        return EventStreamSlot { [self] in
            open.withLock { open in
                let count = open[tenantID, default: 1] - 1
                open[tenantID] = count > 0 ? count : nil
            }
        }
    }
}

/// One admitted stream; its place is given back when the last reference goes, however the
/// stream ends (finished, client gone, or its response never written).
final class EventStreamSlot: Sendable {
    private let release: @Sendable () -> Void

    init(release: @escaping @Sendable () -> Void) {
        self.release = release
    }

    deinit {
        release()
    }
}

/// Counts database reads.
final class ReadCounter: Sendable {
    private let value = Atomic<Int>(0)

    var count: Int { value.load(ordering: .relaxed) }

    func add() {
        value.add(1, ordering: .relaxed)
    }
}
