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

extension PostgresConnection {
    /// Sets the session's `synchronous_commit` and planner settings for the calls that follow
    /// (`.readOnly` sets neither: `plans` is not looked at),
    /// where they change: one round trip for both, and none when this connection's previous
    /// caller wanted the same. The pool calls it before each job (a transaction's with
    /// `.readOnly`, which leaves both alone: `localSettings` asks for the transaction's own),
    /// never inside a transaction: a SET rolled back with one would leave the flags wrong.
    func prepareSession(commit durability: CommitDurability, plans: StatementPlans) throws {
        guard durability != .readOnly else { return }
        let asynchronous = durability == .asynchronous
        let byKey = plans == .byKeyPlannedOnce
        var statements: [String] = []
        if asynchronous != commitsAsynchronously {
            statements.append(asynchronous ? "SET synchronous_commit TO off" : "RESET synchronous_commit")
        }
        if byKey != plansByKey {
            statements += byKey
                ? ["SET plan_cache_mode TO force_generic_plan", "SET enable_seqscan TO off"]
                : ["RESET plan_cache_mode", "RESET enable_seqscan"]
        }
        guard !statements.isEmpty else { return }
        guard !isInTransaction else {
            throw PostgresError(kind: .query, message: "session settings are changed only between transactions")
        }
        try executeScript(statements.joined(separator: "; "))
        commitsAsynchronously = asynchronous
        plansByKey = byKey
    }

    /// What a transaction sends with its BEGIN to commit as `durability` asks and to plan as the
    /// server chooses (its `setUp` may ask otherwise), leaving the session's settings as they are;
    /// nil when the session's settings are those already.
    func localSettings(for durability: CommitDurability) -> String? {
        let commit: String? = switch (durability, commitsAsynchronously) {
        case (.durable, false), (.asynchronous, true), (.readOnly, _): nil
        // DEFAULT: the server's setting, whatever it is (`remote_apply` with a standby, say).
        case (.durable, true): "SET LOCAL synchronous_commit TO DEFAULT"
        case (.asynchronous, false): "SET LOCAL synchronous_commit TO off"
        }
        let plans = plansByKey ? "SET LOCAL plan_cache_mode TO DEFAULT; SET LOCAL enable_seqscan TO DEFAULT" : nil
        let statements = [commit, plans].compactMap { $0 }
        return statements.isEmpty ? nil : statements.joined(separator: "; ")
    }
}
