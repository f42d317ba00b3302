import Postgres

/// How far the outbox can be read in `position` order without ever skipping an event that
/// commits later.
///
/// Positions are taken from a sequence when an event is inserted, not when it commits: a
/// transaction can hold position 12 uncommitted while position 13 is already visible. A reader
/// that moved its cursor to 13 would never see 12. (Reading only events whose `txid` is below
/// the snapshot's xmin does not close this gap: a transaction with an older xid can insert a
/// later position and commit while a younger one that holds an earlier position is still open.)
///
/// The horizon is the sequence's last value H read at some moment, declared safe once every
/// transaction that could have taken a position up to H has ended. Those all had an xid before
/// H was read (every event writer locks or updates its task or session row, so holds an xid,
/// before it inserts an event), so right after reading H they are among the transactions of
/// this database that hold an xid; once none of those is running any more, H is safe.
///
/// Only this database's transactions count: a long transaction in another database of a shared
/// server (or of the test cluster) does not hold Ferry's webhooks back, as a snapshot's
/// cluster-wide xmin would. (Nor is the snapshot's xmax a usable bound: it is one past the last
/// *completed* xid, and a transaction that took its xid after that runs without appearing in the
/// snapshot at all.)
///
/// Every function runs outside a transaction that wrote, so the reader's own xid never holds
/// the horizon back.
public struct EventHorizon: Sendable {
    /// Every event at or below this position is committed or will never exist.
    public private(set) var safePosition: Int64
    private var pending: Candidate?

    struct Candidate: Sendable {
        var position: Int64
        /// This database's transactions that held an xid just after `position` was read.
        var transactions: [String]
    }

    public init(safePosition: Int64 = 0) {
        self.safePosition = safePosition
    }

    /// Whether a proposed horizon waits for transactions to finish; check again shortly.
    public var isWaiting: Bool { pending != nil }

    /// Moves `safePosition` to the pending candidate once its transactions have finished.
    mutating func resolve(on connection: PostgresConnection) throws {
        guard let candidate = pending else { return }
        let finished = try connection.query(
            """
            SELECT NOT EXISTS (
                SELECT 1 FROM pg_stat_activity
                WHERE datname = current_database() AND backend_xid IS NOT NULL AND backend_xid::text = ANY($1))
            """,
            [candidate.transactions]
        ).firstRow().decode(0, as: Bool.self)
        if finished {
            safePosition = max(safePosition, candidate.position)
            pending = nil
        }
    }

    /// Proposes the current end of the log as the next horizon, unless one is already pending.
    /// When no older transaction is still running, it is safe at once.
    mutating func propose(on connection: PostgresConnection) throws {
        guard pending == nil else { return }
        // The sequence first, the transactions second: the order is what makes the argument hold.
        let last = try connection.query(
            "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM events_position_seq"
        ).firstRow().decode(0, as: Int64.self)
        guard last > safePosition else { return }
        let running = try connection.query(
            """
            SELECT coalesce(array_agg(backend_xid::text), '{}') FROM pg_stat_activity
            WHERE datname = current_database() AND backend_xid IS NOT NULL
            """
        ).firstRow().decode(0, as: [String].self)
        if running.isEmpty {
            safePosition = last
        } else {
            pending = Candidate(position: last, transactions: running)
        }
    }

    /// Both steps: what a long-lived reader (the dispatcher, an event stream) does each round.
    public mutating func advance(on connection: PostgresConnection) throws {
        try resolve(on: connection)
        try propose(on: connection)
    }
}

extension EventHorizon {
    /// A safe position for a one-off reader: proposes the current end of the log and waits
    /// (briefly: event transactions are short) until it is safe. If transactions stay open
    /// longer than `patience`, falls back to how far the webhook dispatcher has read, which is
    /// always safe.
    public static func current(pool: PostgresPool, patience: Duration = .seconds(1)) async throws -> Int64 {
        let deadline = ContinuousClock.now + patience
        var horizon = try await pool.withConnection(commit: .readOnly) { connection in
            var horizon = EventHorizon()
            try horizon.propose(on: connection)
            return horizon
        }
        while horizon.isWaiting {
            if ContinuousClock.now >= deadline {
                return try await pool.withConnection(commit: .readOnly) { connection in
                    try connection.query("SELECT position FROM webhook_dispatch WHERE id = 1").first?.decode(0, as: Int64.self) ?? 0
                }
            }
            try await Task.sleep(for: .milliseconds(2))
            horizon = try await pool.withConnection(commit: .readOnly) { [horizon] connection in
                var next = horizon
                try next.resolve(on: connection)
                return next
            }
        }
        return horizon.safePosition
    }
}
