import Glibc

/// An OS thread of our own, for libpq's blocking calls: they must never run on Swift's
/// cooperative pool, where a blocked thread starves every other task.
///
/// Named (visible in `top -H`, `gdb`, and to tests) and joinable.
final class DedicatedThread: Sendable {
    private let thread: pthread_t

    private init(thread: pthread_t) {
        self.thread = thread
    }

    /// Starts `body` on a new thread called `name` (at most 15 bytes are kept by Linux).
    static func start(name: String, _ body: @escaping @Sendable () -> Void) throws -> DedicatedThread {
        let context = Unmanaged.passRetained(ThreadContext(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { pointer in
            guard let pointer else { return nil }
            let context = Unmanaged<ThreadContext>.fromOpaque(pointer).takeRetainedValue()
            GlibcExtensions.nameCurrentThread(context.name)
            context.body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<ThreadContext>.fromOpaque(context).release()
            throw PostgresError(kind: .connection, message: "could not start thread \(name): \(String(cString: strerror(status)))")
        }
        return DedicatedThread(thread: thread)
    }

    /// Waits for the thread to finish. Call once, never from the thread itself.
    func join() {
        _ = pthread_join(thread, nil)
    }

    /// Whether the calling thread is this one.
    var isCurrent: Bool {
        pthread_equal(thread, pthread_self()) != 0
    }

    /// Runs blocking `work` on a fresh thread and awaits its result without occupying a thread of
    /// the cooperative pool. For occasional work (starting a cluster, closing a pool).
    static func run<T: Sendable>(name: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            do {
                let thread = try start(name: name) {
                    continuation.resume(with: Result { try work() })
                }
                pthread_detach(thread.thread)
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

private final class ThreadContext: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
