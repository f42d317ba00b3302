import FerryCore
import FerryStore
import Foundation
import Hummingbird
import ServiceLifecycle
import Synchronization

/// One `GET /v1/events/stream`: Server-Sent Events of the tenant's events after a position, as
/// they commit. `id:` is the event's position as the tenant's cursor (what `Last-Event-ID`
/// resumes from), `event:` its
/// type, `data:` the same JSON body a webhook gets. Woken by event notifications; a comment
/// every `heartbeatInterval` keeps proxies from closing an idle stream and finds clients that
/// went away. Ends when the client disconnects or Ferry shuts down.
struct EventStream: Sendable {
    let events: EventLogStore
    let hub: NotificationHub
    let streams: EventStreams
    let tenantID: String
    let sessionID: String?
    let position: Int64
    let cursor: EventCursor
    /// Whether the key that opened the stream still admits it (not revoked, its tenant not
    /// suspended), asked every `streams.accessCheckInterval`: a key revoked because it leaked
    /// must not go on reading every later event of the tenant through a stream opened before.
    let isStillAdmitted: @Sendable () async throws -> Bool

    static let heartbeatInterval: Duration = .seconds(15)
    static let batchSize = 200

    func run(writer: inout any ResponseBodyWriter) async throws {
        let wake = WakeSignal()
        let stop = StopFlag()
        let signals = hub.subscribe(to: NotificationChannel.events)
        // A client that reconnects waits this long before retrying (SSE's `retry:` field).
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
        let tenantID = self.tenantID
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Only this tenant's events (the payload is the tenant id) concern the stream.
                for await signal in signals where signal == .resync || signal == .notification(payload: tenantID) {
                    wake.ring()
                }
            }
            try await withGracefulShutdownHandler {
                try await stream(into: &writer, wake: wake, stop: stop)
            } onGracefulShutdown: {
                stop.set()
                wake.ring()
            }
            group.cancelAll()
        }
    }

    private func stream(into writer: inout any ResponseBodyWriter, wake: WakeSignal, stop: StopFlag) async throws {
        var position = self.position
        var lastWrite = ContinuousClock.now
        var wokeAt = ContinuousClock.now
        var lastAccessCheck = ContinuousClock.now
        while !Task.isCancelled && !stop.isSet {
            if ContinuousClock.now - lastAccessCheck >= streams.accessCheckInterval {
                // Ends like a stream Ferry closes: a client that reconnects hears why (401, 403).
                // A check that fails (the database briefly away) is asked again next time: only
                // an answer ends the stream.
                guard (try? await isStillAdmitted()) ?? true else { return }
                lastAccessCheck = ContinuousClock.now
            }
            let horizon = try await streams.horizon.horizon(startedAfter: wokeAt)
            while horizon.safePosition > position {
                streams.reads.add()
                let batch = try await events.tenantEvents(
                    tenantID: tenantID, after: position, upTo: horizon.safePosition, sessionID: sessionID, limit: Self.batchSize
                )
                guard !batch.isEmpty else { break }
                var buffer = ByteBuffer()
                for event in batch {
                    buffer.writeString("id: \(cursor.encode(event.position))\nevent: \(event.type)\ndata: ")
                    buffer.writeBytes(event.webhookBody(cursor: cursor))
                    buffer.writeString("\n\n")
                }
                try await writer.write(buffer)
                lastWrite = ContinuousClock.now
                position = batch[batch.count - 1].position
                if batch.count < Self.batchSize { break }
            }
            // Every event of the tenant up to the horizon is sent: the next round reads from there.
            position = max(position, horizon.safePosition)
            if ContinuousClock.now - lastWrite >= Self.heartbeatInterval {
                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                lastWrite = ContinuousClock.now
            }
            let untilHeartbeat = Self.heartbeatInterval - (ContinuousClock.now - lastWrite)
            let untilAccessCheck = streams.accessCheckInterval - (ContinuousClock.now - lastAccessCheck)
            await wake.wait(timeout: horizon.isWaiting ? .milliseconds(5) : max(min(untilHeartbeat, untilAccessCheck), .milliseconds(1)))
            wokeAt = ContinuousClock.now
        }
    }
}

/// Set once Ferry shuts down gracefully: the stream ends so the server can stop.
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
