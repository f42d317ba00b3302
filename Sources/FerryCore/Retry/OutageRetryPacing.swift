/// How a writer that must not give up its write paces its tries while the database is away:
/// a pause from 10 ms, doubling to 2 s, so an outage costs a try every 2 s rather than a spin;
/// and a log line for the first failure, then at most one a `logInterval`, which says how many
/// tries failed meanwhile (one line per try flooded the log for as long as an outage lasted).
///
/// A plain value: the caller sleeps, and says what time it is (tested without sleeping).
public struct OutageRetryPacing: Sendable {
    public let initialPause: Duration
    public let maximumPause: Duration
    public let logInterval: Duration

    private var nextPause: Duration
    private var lastLogged: ContinuousClock.Instant?
    /// Tries that failed in all.
    public private(set) var failures = 0
    /// Tries that failed since the last line logged.
    private var unlogged = 0

    public init(initialPause: Duration = .milliseconds(10), maximumPause: Duration = .seconds(2), logInterval: Duration = .seconds(30)) {
        self.initialPause = initialPause
        self.maximumPause = max(maximumPause, initialPause)
        self.logInterval = logInterval
        self.nextPause = initialPause
    }

    /// What to do after a try failed at `now`.
    public struct Retry: Equatable, Sendable {
        /// How long to wait before the next try.
        public var pause: Duration
        /// Whether to log this failure; nil: stay quiet.
        public var log: FailureLog?
    }

    /// A log line's figures.
    public struct FailureLog: Equatable, Sendable {
        /// Tries that failed since the last line (this one included).
        public var failedTries: Int
        /// Tries that failed in all.
        public var failedInAll: Int
    }

    public mutating func failed(at now: ContinuousClock.Instant) -> Retry {
        failures += 1
        unlogged += 1
        let pause = nextPause
        nextPause = min(nextPause * 2, maximumPause)
        guard lastLogged.map({ now - $0 >= logInterval }) ?? true else { return Retry(pause: pause, log: nil) }
        defer { (lastLogged, unlogged) = (now, 0) }
        return Retry(pause: pause, log: FailureLog(failedTries: unlogged, failedInAll: failures))
    }
}
