import FerryTestSupport
import Foundation
import Postgres
import Synchronization
import Testing

/// Listens on some channels with a connection of its own and keeps every notification, so a
/// test can check what a committed transaction announced.
final class NotificationRecorder: Sendable {
    private let listener: PostgresListener
    private let received = Mutex<[(channel: String, payload: String)]>([])
    private let connected = Atomic<Bool>(false)
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    /// Starts listening and returns once LISTEN is in place.
    init(conninfo: String, channels: [String]) async throws {
        listener = PostgresListener(conninfo: conninfo, channels: channels, logger: quietLogger)
        listener.start()
        let task = Task { [self] in
            for await event in listener.events {
                switch event {
                case .connected:
                    connected.store(true, ordering: .releasing)
                case .notification(let channel, let payload):
                    received.withLock { $0.append((channel, payload)) }
                case .overflowed:
                    Issue.record("the listener dropped notifications: more than its buffer waited for this recorder")
                }
            }
        }
        consumer.withLock { $0 = task }
        let deadline = ContinuousClock.now + .seconds(10)
        while !connected.load(ordering: .acquiring) {
            guard ContinuousClock.now < deadline else { throw RecorderError.notConnected }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Runs `body` with a recorder that is stopped afterwards, whatever happens.
    static func with<T>(conninfo: String, channels: [String], _ body: (NotificationRecorder) async throws -> T) async throws -> T {
        let recorder = try await NotificationRecorder(conninfo: conninfo, channels: channels)
        do {
            let result = try await body(recorder)
            await recorder.stop()
            return result
        } catch {
            await recorder.stop()
            throw error
        }
    }

    /// Payloads received so far on `channel`.
    func payloads(on channel: String) -> [String] {
        received.withLock { $0.filter { $0.channel == channel }.map(\.payload) }
    }

    /// Waits until a payload on `channel` satisfies `condition`, or `timeout` passes.
    func waitForPayload(on channel: String, timeout: Duration = .seconds(5), where condition: (String) -> Bool = { _ in true }) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let match = payloads(on: channel).first(where: condition) { return match }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return payloads(on: channel).first(where: condition)
    }

    func stop() async {
        await listener.close()
        await consumer.withLock { $0 }?.value
    }

    enum RecorderError: Error {
        case notConnected
    }
}
