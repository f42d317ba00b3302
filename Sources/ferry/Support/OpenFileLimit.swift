import Glibc

/// Open files bound how many transfers an instance can run: each holds a socket and, for a
/// download, its partial file. Past the limit, curl's socket() fails and the transfer ends
/// with -1004 at once; better to leave the task queued for a slot.
enum OpenFileLimit {
    /// Kept for everything but transfers: PostgreSQL connections, API and webhook
    /// connections, listeners, logs.
    static let reserved = 512

    /// Raises the soft limit to the hard one, as servers do, and returns the limit in force.
    static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// How many transfers each of `workers` may run so that all of them fit in `openFiles`.
    static func transfersPerWorker(openFiles: Int, workers: Int, preferred: Int) -> Int {
        max(1, min(preferred, (openFiles - reserved) / 2 / max(1, workers)))
    }
}
