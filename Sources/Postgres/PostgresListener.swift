import CLibPQ
import Glibc
import Logging
import Synchronization

public enum PostgresListenerEvent: Sendable, Hashable {
    /// LISTEN is in place: after the first connection and after every reconnection. Notifications
    /// sent while disconnected are lost, so consumers re-check the state they watch.
    case connected
    case notification(channel: String, payload: String)
    /// The consumer fell behind by more than the buffer holds and the oldest events were
    /// dropped: as after a reconnection, it re-checks the state it watches. Read once per loss,
    /// before the events kept after it (`PostgresListenerEvents`).
    case overflowed
}

/// The listener's events, for one consumer. When its buffer dropped some (the consumer fell
/// behind), the next one read is `.overflowed`, once, then those kept after the loss. A marker
/// yielded into the buffer after every drop pushed out one more event each time, and under a
/// lasting flood made half the buffer markers, each a re-check for every subscriber.
public struct PostgresListenerEvents: AsyncSequence, Sendable {
    public typealias Element = PostgresListenerEvent
    let stream: AsyncStream<PostgresListenerEvent>
    let overflow: ListenerOverflow

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), overflow: overflow)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<PostgresListenerEvent>.AsyncIterator
        let overflow: ListenerOverflow

        public mutating func next() async -> PostgresListenerEvent? {
            // A drop happens only while the buffer is full, never while this waits on it empty.
            if overflow.take() { return .overflowed }
            return await base.next()
        }
    }
}

/// Raised by the listening thread when its buffer drops an event; taken by the consumer.
final class ListenerOverflow: Sendable {
    private let dropped = Atomic<Bool>(false)

    func raise() { dropped.store(true, ordering: .releasing) }

    func take() -> Bool { dropped.exchange(false, ordering: .acquiringAndReleasing) }
}

/// LISTEN on some channels, on a connection and a thread ("ferry-pg-listen") of its own, which
/// waits in `poll()` on the connection's socket and reconnects (with backoff, forever) when the
/// connection is lost. Notifications arrive through `events`, meant for one consumer.
///
/// Send with `SELECT pg_notify($1, $2)` through the pool.
public final class PostgresListener: Sendable {
    public let events: PostgresListenerEvents
    private let loop: ListenerLoop
    private let thread = Mutex<DedicatedThread?>(nil)

    /// `applicationName` labels the session in `pg_stat_activity`. `bufferLimit`: how many events
    /// wait for a consumer that falls behind; beyond it the oldest go, and `.overflowed` says so.
    /// (Unbounded, a consumer starved of CPU under a flood of commits let the buffer grow
    /// without limit.)
    public init(conninfo: String, channels: [String], logger: Logger, applicationName: String? = nil, bufferLimit: Int = 4096) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PostgresListenerEvent.self, bufferingPolicy: .bufferingNewest(max(bufferLimit, 1))
        )
        let overflow = ListenerOverflow()
        events = PostgresListenerEvents(stream: stream, overflow: overflow)
        loop = ListenerLoop(
            conninfo: conninfo, channels: channels, applicationName: applicationName,
            logger: logger, continuation: continuation, overflow: overflow
        )
    }

    /// Starts the listening thread; does nothing if it runs already or the listener was stopped.
    public func start() {
        thread.withLock { thread in
            guard thread == nil, !loop.isStopping else { return }
            do {
                thread = try DedicatedThread.start(name: "ferry-pg-listen") { [loop] in loop.run() }
            } catch {
                loop.logger.error("could not start the LISTEN thread", metadata: ["error": "\(error)"])
                loop.continuation.finish()
            }
        }
    }

    /// Asks the thread to stop and ends the stream, without waiting: safe in a task's
    /// cancellation handler, which runs on whatever thread cancels and must not block.
    public func requestStop() {
        loop.requestStop()
        loop.continuation.finish()
    }

    /// `requestStop()`, then waits for the thread to end (as long as a libpq call in progress
    /// takes: a reconnect to an absent server, up to its connect timeout) on a thread of its
    /// own, not on the cooperative pool.
    public func close() async {
        requestStop()
        guard let running = takeThread() else { return }
        _ = try? await DedicatedThread.run(name: "ferry-pg-listen-join") { running.join() }
    }

    private func takeThread() -> DedicatedThread? {
        thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
    }
}

/// The listening thread's work, and the wake-up channel `stop()` uses to interrupt its `poll()`.
final class ListenerLoop: Sendable {
    let conninfo: String
    let channels: [String]
    let applicationName: String?
    let logger: Logger
    let continuation: AsyncStream<PostgresListenerEvent>.Continuation
    let overflow: ListenerOverflow
    /// A pipe, readable once a stop is requested: (read end, write end).
    private let wakeUp: (Int32, Int32)?
    private let stopping = Atomic<Bool>(false)
    /// Without traffic a dead peer can go unnoticed, so the connection is probed this often.
    private let probeInterval: Duration = .seconds(30)

    init(conninfo: String, channels: [String], applicationName: String?, logger: Logger,
         continuation: AsyncStream<PostgresListenerEvent>.Continuation, overflow: ListenerOverflow) {
        self.conninfo = conninfo
        self.channels = channels
        self.applicationName = applicationName
        self.logger = logger
        self.continuation = continuation
        self.overflow = overflow
        wakeUp = GlibcExtensions.closeOnExecPipe()
    }

    deinit {
        if let (readEnd, writeEnd) = wakeUp {
            close(readEnd)
            close(writeEnd)
        }
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func requestStop() {
        stopping.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        if let (_, writeEnd) = wakeUp { _ = write(writeEnd, &byte, 1) }
    }

    func run() {
        var backoff = ReconnectBackoff()
        var failures = 0
        while !isStopping {
            do {
                let connection = try PostgresConnection.connect(conninfo, applicationName: applicationName)
                defer { connection.close() }
                for channel in channels {
                    try connection.execute("LISTEN " + quotedIdentifier(channel))
                }
                if failures > 0 {
                    logger.notice("LISTEN connection re-established", metadata: ["failedAttempts": "\(failures)"])
                }
                failures = 0
                backoff = ReconnectBackoff()
                publish(.connected)
                try receive(on: connection)
            } catch {
                guard !isStopping else { return }
                failures += 1
                if failures == 1 {
                    logger.warning("LISTEN connection failed; reconnecting", metadata: ["error": "\(error)"])
                }
                sleepUnlessStopped(backoff.nextDelay())
            }
        }
    }

    /// Waits for notifications until the connection is lost (throws) or a stop is requested.
    private func receive(on connection: PostgresConnection) throws {
        let handle = connection.rawHandle
        var lastTraffic = ContinuousClock.now
        while !isStopping {
            var descriptors = [
                pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeUp?.0 ?? -1, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, 1000)
            if ready < 0, errno != EINTR {
                throw PostgresError(kind: .connection, message: "poll() failed: \(String(cString: strerror(errno)))")
            }
            if descriptors[0].revents != 0 {
                guard PQconsumeInput(handle) != 0 else {
                    throw PostgresError(connection: handle)
                }
                lastTraffic = .now
                while let notification = PQnotifies(handle) {
                    let channel = String(cString: notification.pointee.relname)
                    let payload = String(cString: notification.pointee.extra)
                    PQfreemem(notification)
                    publish(.notification(channel: channel, payload: payload))
                }
            } else if ContinuousClock.now - lastTraffic > probeInterval {
                try connection.execute("SELECT 1")
                lastTraffic = .now
            }
            if connection.isBroken {
                throw PostgresError(connection: handle)
            }
        }
    }

    /// Yields `event`; when that drops the oldest one waiting, the consumer is told at its next read.
    private func publish(_ event: PostgresListenerEvent) {
        if case .dropped = continuation.yield(event) { overflow.raise() }
    }

    private func sleepUnlessStopped(_ delay: Duration) {
        var descriptor = pollfd(fd: wakeUp?.0 ?? -1, events: Int16(POLLIN), revents: 0)
        let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        _ = poll(&descriptor, 1, Int32(milliseconds))
    }
}

/// A channel name as an SQL identifier (LISTEN takes no parameters): double-quoted, inner quotes doubled.
func quotedIdentifier(_ name: String) -> String {
    var quoted = "\""
    for character in name {
        if character == "\"" { quoted.append("\"") }
        quoted.append(character)
    }
    quoted.append("\"")
    return quoted
}
