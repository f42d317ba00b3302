/// The session settings a pool call asks for (`CommitDurability`, `StatementPlans`), changed only
/// when the connection's previous caller wanted otherwise.
extension PostgresConnection {
    /// Sets the session's `synchronous_commit` and planner settings for the calls that follow,
    /// where they change: one round trip for both, and none when this connection's previous
    /// caller wanted the same. `.readOnly` sets neither (`plans` is not looked at). The pool
    /// calls it before each job (a transaction's with `.readOnly`: `localSettings` asks for the
    /// transaction's own), never inside a transaction: a SET rolled back with one would leave the
    /// flags wrong.
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

    /// What a transaction sends with its BEGIN to commit as `durability` and plan as `plans` ask,
    /// before its own set-up, leaving the session's settings as they are; nil when the session's
    /// settings are those already.
    func localSettings(for durability: CommitDurability, plans: StatementPlans) -> String? {
        let commit: String? = switch (durability, commitsAsynchronously) {
        case (.durable, false), (.asynchronous, true), (.readOnly, _): nil
        // DEFAULT: the server's setting, whatever it is (`remote_apply` with a standby, say).
        case (.durable, true): "SET LOCAL synchronous_commit TO DEFAULT"
        case (.asynchronous, false): "SET LOCAL synchronous_commit TO off"
        }
        let planning: String? = switch (plans, plansByKey) {
        case (.byKeyPlannedOnce, true), (.chosenByServer, false): nil
        case (.byKeyPlannedOnce, false): "SET LOCAL plan_cache_mode TO force_generic_plan; SET LOCAL enable_seqscan TO off"
        case (.chosenByServer, true): "SET LOCAL plan_cache_mode TO DEFAULT; SET LOCAL enable_seqscan TO DEFAULT"
        }
        let statements = [commit, planning].compactMap { $0 }
        return statements.isEmpty ? nil : statements.joined(separator: "; ")
    }
}
