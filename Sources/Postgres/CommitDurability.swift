import CLibPQ

/// Whether a pool call's commits wait for their WAL to reach the disk.
public enum CommitDurability: Sendable {
    /// The server's setting (by default `synchronous_commit = on`): once COMMIT returns, the
    /// transaction survives a crash of the server or of its machine.
    case durable
    /// `synchronous_commit = off`: COMMIT returns before the WAL is flushed, which the server's
    /// WAL writer does within three `wal_writer_delay`s (600 ms by default), or any later durable
    /// commit does with its own. Only a crash of the server or its machine in that window loses
    /// such a transaction; a crash of the client loses nothing. The transaction is visible to
    /// everyone at once, and a durable transaction that read it makes it durable too.
    ///
    /// For what may be forgotten in such a crash because it is done again: a delivery's lease
    /// or its record (the delivery is sent again, as at-least-once allows), never an event.
    case asynchronous
}

extension PostgresConnection {
    /// Sets the session's `synchronous_commit` for the calls that follow, when it changes: a
    /// round trip only when this connection's previous caller wanted the other kind. Outside a
    /// transaction only (a SET rolled back with a transaction would leave the flag wrong);
    /// the pool calls it before each job.
    func commit(_ durability: CommitDurability) throws {
        let asynchronous = durability == .asynchronous
        guard asynchronous != commitsAsynchronously, !isInTransaction else { return }
        try executeScript(asynchronous ? "SET synchronous_commit TO off" : "RESET synchronous_commit")
        commitsAsynchronously = asynchronous
    }
}
