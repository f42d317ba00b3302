import Foundation
import Postgres

/// A few dedicated threads for blocking work (fsync, rename, reading files) so that it never
/// runs on Swift's cooperative pool or a NIO event loop.
public final class BlockingPool: @unchecked Sendable {
    // @unchecked: `jobs` and `isShutDown` are only touched with `condition` held.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var isShutDown = false
    private var threads: [Thread] = []

    public init(name: String, threadCount: Int) {
        for index in 0..<max(threadCount, 1) {
            let threadName = "\(name)-\(index)"
            // Named from inside, by the thread itself (see ThreadNaming). The thread holds its
            // pool: after `shutdown()` the last owner may let go while a thread is still waking
            // from its wait, and an unowned reference crashed the process there.
            let thread = Thread { [self] in
                ThreadNaming.nameCurrentThread(threadName)
                self.serve()
            }
            threads.append(thread)
            thread.start()
        }
    }

    /// Runs `work` on one of the pool's threads and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = enqueue {
                continuation.resume(with: Result { try work() })
            }
            if !accepted { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Lets queued work finish, then stops the threads.
    public func shutdown() {
        condition.lock()
        isShutDown = true
        condition.broadcast()
        condition.unlock()
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !isShutDown else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty, !isShutDown { condition.wait() }
            if jobs.isEmpty, isShutDown {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
