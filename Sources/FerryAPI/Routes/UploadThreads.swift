import NIOPosix

/// Where uploads (blobs, streamed bodies) write their chunks and sync their files: a pool of
/// its own. On NIO's shared blocking pool (as many threads as cores: two here), two large
/// uploads ending together held both threads in their final fsync for as long as the disk took
/// to drain, and file downloads and /readyz's disk check waited behind them.
enum UploadThreads {
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    /// `work` on the pool.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(work)
    }

    /// `work` on the pool, also when the request's task was cancelled (its client went away):
    /// `runIfActive` skips work a cancelled task queued, and cleanup (closing a descriptor,
    /// writing a marker a transfer waits for) must run all the same.
    static func runEvenIfCancelled<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        // An unstructured task does not inherit its creator's cancellation.
        try await Task { try await pool.runIfActive(work) }.value
    }
}
