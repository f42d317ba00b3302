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
    /// The call only reads, so how it commits does not matter: the session's settings (this one,
    /// and how statements are planned, `StatementPlans`) are left as the last call left them,
    /// without the SET or RESET that asking for either may cost. (Anything it did write would
    /// commit as that setting says.)
    case readOnly
}
