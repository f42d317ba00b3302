import Glibc

/// A dedicated, joinable POSIX thread.
///
/// The origin blocks in `accept`, `recv` and `send` and sleeps in stalls; doing that on
/// Swift's cooperative pool (two threads on a two-core machine) would starve the tests that
/// drive it. `Foundation.Thread` cannot be joined, and `stop()` must know every thread is gone.
struct OriginThread: Sendable {
    private let handle: pthread_t

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread.
    static func start(_ body: @escaping @Sendable () -> Void) throws -> OriginThread {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        // 1 MiB instead of the default 8 MiB, so tests can hold a thousand connections open.
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 20)
        var handle = pthread_t()
        let result = pthread_create(&handle, &attributes, { context in
            guard let context else { return nil }
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw OriginError.system(call: "pthread_create", code: result)
        }
        return OriginThread(handle: handle)
    }

    /// Waits for the thread to finish. Call exactly once per thread. Called from the thread
    /// itself (a handler that stops its own origin), it detaches instead of deadlocking.
    func join() {
        if pthread_equal(handle, pthread_self()) != 0 {
            _ = pthread_detach(handle)
        } else {
            _ = pthread_join(handle, nil)
        }
    }
}
