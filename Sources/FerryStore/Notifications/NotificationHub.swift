import Foundation
import Logging
import Postgres
import Synchronization

/// One LISTEN connection per instance, fanned out to whoever inside the process waits for
/// news: schedulers (new work, stop requests), long-polls (task completed), webhook
/// dispatchers and event streams (new events).
///
/// After a reconnection, or when the listener's buffer overflowed, notifications may have been
/// missed, so every subscriber is told to re-check (`.resync`) instead of trusting that nothing
/// happened.
public final class NotificationHub: Sendable {
    public enum Signal: Sendable, Equatable {
        case notification(payload: String)
        case resync
    }

    private struct Subscriber {
        var channel: String
        var continuation: AsyncStream<Signal>.Continuation
    }

    private let listener: PostgresListener
    private let subscribers = Mutex<[UUID: Subscriber]>([:])
    private let logger: Logger

    public static let channels = [
        NotificationChannel.work, NotificationChannel.control, NotificationChannel.priority, NotificationChannel.taskCompleted, NotificationChannel.events,
        NotificationChannel.sessionReset, NotificationChannel.sessionFlush, NotificationChannel.sessionInvalidated,
    ]

    public init(conninfo: String, logger: Logger) {
        self.listener = PostgresListener(conninfo: conninfo, channels: Self.channels, logger: logger)
        self.logger = logger
    }

    /// Signals for one channel. Buffers only the newest few: a subscriber that falls behind
    /// re-checks the database anyway, so old notifications have no value.
    public func subscribe(to channel: String) -> AsyncStream<Signal> {
        let (stream, continuation) = AsyncStream<Signal>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        subscribers.withLock { $0[id] = Subscriber(channel: channel, continuation: continuation) }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// Waits until `taskID` is reported completed, or `timeout` passes. The caller re-reads the
    /// task either way: the notification is a hint, the database is the truth. `isCompleted`
    /// (a read of the database) runs once listening has begun, so a completion committed
    /// between the caller's last read and this wait is not missed.
    public func waitForCompletion(
        of taskID: String, timeout: Duration, unless isCompleted: @Sendable () async -> Bool = { false }
    ) async {
        let signals = subscribe(to: NotificationChannel.taskCompleted)
        if await isCompleted() { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in signals {
                    if signal == .resync || signal == .notification(payload: taskID) { return }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Listens until cancelled.
    public func run() async {
        listener.start()
        // Warned at most once a minute: a lasting flood would otherwise log a line for every loss.
        var lastOverflowWarning: ContinuousClock.Instant?
        await withTaskCancellationHandler {
            for await event in listener.events {
                switch event {
                case .connected:
                    broadcast(.resync, channel: nil)
                case .overflowed:
                    if lastOverflowWarning.map({ ContinuousClock.now - $0 >= .seconds(60) }) ?? true {
                        logger.warning("notifications arrived faster than this instance read them; subscribers re-check")
                        lastOverflowWarning = .now
                    }
                    broadcast(.resync, channel: nil)
                case .notification(let channel, let payload):
                    broadcast(.notification(payload: payload), channel: channel)
                }
            }
        } onCancel: {
            // Not `stop()`: joining the thread would block the cooperative thread that cancels
            // for as long as a libpq call in progress takes (a reconnect to an absent server).
            listener.requestStop()
        }
        await listener.close()
        // Finish outside the lock: finishing runs onTermination, which takes the lock itself.
        let remaining = subscribers.withLock { subscribers in
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for subscriber in remaining { subscriber.continuation.finish() }
    }

    /// Yields outside the lock. A yield resumes the subscriber's task, which takes that task's
    /// status lock; cancelling the task holds the same status lock while its onTermination
    /// takes ours. Yielding under our lock deadlocked the two, and with them every thread of
    /// the cooperative pool they ran on (a hung process, seen in the test suite).
    private func broadcast(_ signal: Signal, channel: String?) {
        let recipients = subscribers.withLock { subscribers in
            subscribers.values.filter { channel == nil || $0.channel == channel }.map(\.continuation)
        }
        for continuation in recipients { continuation.yield(signal) }
    }
}
