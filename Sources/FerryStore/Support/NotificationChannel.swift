/// The LISTEN/NOTIFY channels instances use to tell each other about work.
/// `pg_notify` inside a transaction is delivered at commit, never for a rolled-back change.
public enum NotificationChannel {
    /// A task became runnable: schedulers should claim. Payload: the task id.
    public static let work = "ferry_work"
    /// A running task must stop (suspend or cancel). Payload: "<task id> <lease owner> <stop reason>".
    public static let control = "ferry_control"
    /// A claimed task's priority changed (`PATCH`). Payload: "<task id> <lease owner> <priority>".
    /// The owner reorders it among the tasks waiting there for a connection.
    public static let priority = "ferry_task_priority"
    /// A task completed. Payload: the task id. Wakes long-polls on every instance.
    public static let taskCompleted = "ferry_task_completed"
    /// A session was reset. Payload: "<session id> <connection generation>". Instances drop what
    /// they keep of it in memory (an ephemeral session's cookies and cache), and its running
    /// transfers go on without cookies and credentials, on new connections.
    public static let sessionReset = "ferry_session_reset"
    /// A session was flushed. Payload: "<session id> <connection generation>". Instances
    /// checkpoint its downloads and renew its connections.
    public static let sessionFlush = "ferry_session_flush"
    /// A session became invalidated. Payload: the session id. Instances drop what they keep of
    /// it in memory (an ephemeral session's cookies, cache and credentials).
    public static let sessionInvalidated = "ferry_session_invalidated"
    /// New events were written. Payload: the tenant id. Wakes webhook dispatchers and streams.
    public static let events = "ferry_events"
}
