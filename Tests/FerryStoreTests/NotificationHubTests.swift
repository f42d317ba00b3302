import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@Suite("NotificationHub: completion waits and resyncs after reconnection")
struct NotificationHubTests {
    /// Runs `body` with a running hub on the fixture's database, stopping it afterwards.
    ///
    /// Subscriptions are made through `RunningHub.collect` and ended here before the hub stops,
    /// so no collector is left waiting on a stream the stopped hub finishes.
    private func withHub<T>(_ fixture: StoreFixture, _ body: (RunningHub) async throws -> T) async throws -> T {
        let hub = RunningHub(NotificationHub(conninfo: fixture.test.conninfo, logger: quietLogger))
        let probe = hub.collect(NotificationChannel.work)
        let running = Task { await hub.hub.run() }
        // The first `.resync` says LISTEN is in place.
        let result: Result<T, any Error>
        if await probe.wait(for: .resync, timeout: .seconds(10)) {
            do { result = .success(try await body(hub)) } catch { result = .failure(error) }
        } else {
            result = .failure(SignalCollector.NotListening())
        }
        await hub.stopCollectors()
        running.cancel()
        await running.value
        return try result.get()
    }

    @Test("waitForCompletion returns as soon as the task completes")
    func returnsOnCompletion() async throws {
        try await StoreFixture.with { fixture in
            try await withHub(fixture) { running in
                let task = try await fixture.makeTask(kind: .data)
                let started = ContinuousClock.now
                async let waited: Void = running.hub.waitForCompletion(of: task.id, timeout: .seconds(20))
                try await Task.sleep(for: .milliseconds(100))
                _ = try await fixture.tasks.apply(.cancel, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
                await waited
                let elapsed = ContinuousClock.now - started
                #expect(elapsed < .seconds(3))
                #expect(try await fixture.tasks.find(tenantID: fixture.tenant.id, id: task.id).state == .completed)
            }
        }
    }

    @Test("a completion committed before the wait began returns at once, not after the timeout")
    func completedBeforeTheWait() async throws {
        try await StoreFixture.with { fixture in
            try await withHub(fixture) { running in
                let task = try await fixture.makeTask(kind: .data)
                _ = try await fixture.tasks.apply(.cancel, tenantID: fixture.tenant.id, taskID: task.id, resumeData: fixture.resumeData)
                let (tasks, tenantID) = (fixture.tasks, fixture.tenant.id)
                let started = ContinuousClock.now
                await running.hub.waitForCompletion(of: task.id, timeout: .seconds(20)) {
                    (try? await tasks.find(tenantID: tenantID, id: task.id).state) == .completed
                }
                #expect(ContinuousClock.now - started < .seconds(3))
            }
        }
    }

    @Test("waitForCompletion ignores other tasks and returns after its timeout")
    func timesOut() async throws {
        try await StoreFixture.with { fixture in
            try await withHub(fixture) { running in
                let waitedFor = try await fixture.makeTask(kind: .data)
                let other = try await fixture.makeTask(kind: .data)
                let started = ContinuousClock.now
                async let waited: Void = running.hub.waitForCompletion(of: waitedFor.id, timeout: .milliseconds(600))
                try await Task.sleep(for: .milliseconds(50))
                _ = try await fixture.tasks.apply(.cancel, tenantID: fixture.tenant.id, taskID: other.id, resumeData: fixture.resumeData)
                await waited
                let elapsed = ContinuousClock.now - started
                #expect(elapsed >= .milliseconds(600))
                #expect(elapsed < .seconds(3))
            }
        }
    }

    @Test("subscribers get their channel's payloads, and .resync after the listener's backend is terminated")
    func resyncAfterReconnect() async throws {
        try await StoreFixture.with { fixture in
            try await withHub(fixture) { running in
                let control = running.collect(NotificationChannel.control)
                let work = running.collect(NotificationChannel.work)
                try await fixture.execute("SELECT pg_notify($1, $2)", [NotificationChannel.control, "tsk_1 owner cancel"])
                #expect(await control.wait(for: .notification(payload: "tsk_1 owner cancel")))
                #expect(work.received.isEmpty)

                let terminated = try await fixture.value(
                    """
                    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'
                    """,
                    as: Int.self
                )
                #expect(terminated == 1)
                #expect(await control.wait(for: .resync, timeout: .seconds(10)))
                #expect(await work.wait(for: .resync, timeout: .seconds(10)))

                // Listening again: new notifications arrive.
                try await fixture.execute("SELECT pg_notify($1, $2)", [NotificationChannel.control, "tsk_2 owner suspend"])
                #expect(await control.wait(for: .notification(payload: "tsk_2 owner suspend")))
                #expect(control.received == [.notification(payload: "tsk_1 owner cancel"), .resync, .notification(payload: "tsk_2 owner suspend")])
            }
        }
    }

    @Test("subscribers cancelled while notifications pour in: neither side waits on the other")
    func cancellingWhileBroadcasting() async throws {
        // A deadlock here stops every thread of the cooperative pool, and with them any time
        // limit of the test library: a plain thread turns it into a crash that names itself.
        let watchdog = Watchdog(after: 120, "NotificationHub deadlocked: subscribers cancelled during a broadcast")
        defer { watchdog.disarm() }
        try await StoreFixture.with { fixture in
            try await withHub(fixture) { running in
                let hub = running.hub
                let pouring = Task {
                    for round in 0..<40 {
                        try await fixture.execute(
                            "SELECT pg_notify($1, $2 || g) FROM generate_series(1, 200) AS g",
                            [NotificationChannel.taskCompleted, "tsk_\(round)_"]
                        )
                    }
                }
                // Each wait subscribes, times out at once and cancels its reader: the stream's
                // onTermination runs on the cancelling thread while broadcasts go on.
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            for _ in 0..<150 { await hub.waitForCompletion(of: "tsk_never", timeout: .microseconds(200)) }
                        }
                    }
                }
                try await pouring.value
            }
        }
    }
}

/// Crashes the process with `message` unless disarmed within `seconds`; runs on its own thread.
final class Watchdog: Sendable {
    private let isDisarmed = Atomic(false)

    init(after seconds: Double, _ message: String) {
        let thread = Thread { [self] in
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if isDisarmed.load(ordering: .acquiring) { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if !isDisarmed.load(ordering: .acquiring) { fatalError(message) }
        }
        thread.start()
    }

    func disarm() {
        isDisarmed.store(true, ordering: .releasing)
    }
}

/// A hub under test and the subscriptions made on it.
final class RunningHub: Sendable {
    let hub: NotificationHub
    private let collectors = Mutex<[SignalCollector]>([])

    init(_ hub: NotificationHub) {
        self.hub = hub
    }

    func collect(_ channel: String) -> SignalCollector {
        let collector = SignalCollector(hub.subscribe(to: channel))
        collectors.withLock { $0.append(collector) }
        return collector
    }

    func stopCollectors() async {
        for collector in collectors.withLock({ $0 }) { await collector.stop() }
    }
}

/// Keeps what a hub subscription delivers, for a test to wait on.
final class SignalCollector: Sendable {
    struct NotListening: Error {}

    private let signals = Mutex<[NotificationHub.Signal]>([])
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    init(_ stream: AsyncStream<NotificationHub.Signal>) {
        let task = Task { [self] in
            for await signal in stream { signals.withLock { $0.append(signal) } }
        }
        consumer.withLock { $0 = task }
    }

    var received: [NotificationHub.Signal] { signals.withLock { $0 } }

    /// Whether `signal` arrived within `timeout`.
    func wait(for signal: NotificationHub.Signal, timeout: Duration = .seconds(5)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if received.contains(signal) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return received.contains(signal)
    }

    /// Ends the subscription (its stream's `onTermination` unsubscribes it from the hub).
    func stop() async {
        let task = consumer.withLock { $0 }
        task?.cancel()
        await task?.value
    }
}
