import Postgres

/// For the rest of a transaction: statements read through their indexes only, with plans made
/// once (generic) rather than for every execution.
///
/// Right after a burst of new or updated rows the statistics lag behind (autovacuum has not
/// analyzed yet), and the planner would scan whole tables, dead rows and all, while the
/// transaction holds its locks. With sequential scans off, plans of statements that find rows by
/// key are index-driven whatever the statistics say, so a generic plan serves; planning such a
/// statement on every execution cost as much as running it.
enum IndexedPlans {
    /// The settings as select-list items, for a set-up that takes something else too (the task
    /// claim's advisory lock).
    static let settings = "set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)"

    /// The settings as a statement of their own, sent with the transaction's BEGIN
    /// (`withTransaction(setUp:)`), for a transaction whose first statement should itself be
    /// planned once. Sent apart, it was a round trip of every ledger writer's transaction.
    static let setUp = "SELECT \(settings)"
}
