/// How the server plans a pool call's statements.
public enum StatementPlans: Sendable {
    /// As the server's settings say: PostgreSQL plans a prepared statement for its values at
    /// each of its first five executions, and may then keep one generic plan.
    case chosenByServer
    /// Each statement planned once, generically (`plan_cache_mode = force_generic_plan`), and
    /// only with index scans (`enable_seqscan = off`): for statements that find their rows by
    /// key, whose plans must not follow statistics taken at a quiet moment, and whose planning
    /// costs as much as running them. A statement whose values change its plan (a filter that
    /// may be absent, a list whose share of a table varies) wants `chosenByServer`.
    ///
    /// A generic plan a connection made in this mode stays with its prepared statement: should
    /// the same statement run later on that connection in the other mode, PostgreSQL may reuse
    /// it (after five custom plans, if it looks no dearer). So a statement is meant for one mode.
    case byKeyPlannedOnce
}
