/// Whether a pool call's commits wait for their WAL to reach the disk.
public enum CommitDurability: Sendable {
    /// The server's setting (by default `synchronous_commit = on`): once COMMIT returns, the
    /// transaction survives a crash of the server or of its machine.
    case durable
    /// `synchronous_commit = off`: COMMIT returns before the WAL is flushed, which the server's
    /// WAL writer does within three `wal_writer_delay`s (600 ms by default), or any later durable
    /// commit of a transaction that wrote does with its own. Only a crash of the server or its
    /// machine in that window loses such a transaction; a crash of the client loses nothing. The
    /// transaction is visible to everyone at once; a durable transaction that read it and then
    /// wrote makes it durable with its own commit (a read-only one does not).
    ///
    /// For what may be forgotten in such a crash because it is done again: a delivery's lease
    /// or its record (the delivery is sent again, as at-least-once allows), never an event.
    case asynchronous
    /// The call only reads, so how it commits does not matter: the session's setting is left as
    /// the last call left it, without the SET or RESET that asking for either kind may cost.
    /// (Anything it did write would commit as that setting says.)
    case readOnly
}

extension PostgresConnection {
    /// Sets the session's `synchronous_commit` for the calls that follow, when it changes: a
    /// round trip only when this connection's previous caller wanted the other kind. The pool
    /// calls it before each job (a transaction's with `.readOnly`: `localCommitSetting` does for
    /// those), never inside a transaction: a SET rolled back with one would leave the flag wrong.
    func commit(_ durability: CommitDurability) throws {
        guard durability != .readOnly else { return }
        let asynchronous = durability == .asynchronous
        guard asynchronous != commitsAsynchronously else { return }
        guard !isInTransaction else {
            throw PostgresError(kind: .query, message: "synchronous_commit is changed only between transactions")
        }
        try executeScript(asynchronous ? "SET synchronous_commit TO off" : "RESET synchronous_commit")
        commitsAsynchronously = asynchronous
    }

    /// What a transaction sends with its BEGIN to commit as `durability` asks, leaving the
    /// session's setting as it is; nil when the session's setting is that already.
    func localCommitSetting(for durability: CommitDurability) -> String? {
        switch (durability, commitsAsynchronously) {
        case (.durable, false), (.asynchronous, true), (.readOnly, _): nil
        // DEFAULT: the server's setting, whatever it is (`remote_apply` with a standby, say).
        case (.durable, true): "SET LOCAL synchronous_commit TO DEFAULT"
        case (.asynchronous, false): "SET LOCAL synchronous_commit TO off"
        }
    }
}
