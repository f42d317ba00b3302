import Foundation
import Synchronization
import TestOrigin

/// An origin serving one resource with a strong ETag and byte ranges, at a rate the test can
/// change while a transfer runs, that counts every body byte it hands to the kernel and when
/// each request arrived. Those are what the end-to-end tests measure: bytes fetched twice after
/// a crash, and how long a takeover took.
final class RecordingOrigin: Sendable {
    struct Arrival: Sendable {
        var at: ContinuousClock.Instant
        var range: String?
        var ifRange: String?

        /// N of `Range: bytes=N-`, nil without a range.
        var rangeStart: Int? {
            guard let range, range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
            return Int(range.dropFirst(6).dropLast())
        }
    }

    private struct State {
        var bytesServed = 0
        var arrivals: [Arrival] = []
        var bytesPerSecond: Int?
        var responding = 0
        var mostResponding = 0
    }

    let body: [UInt8]
    let etag = "\"e2e-resource-v1\""
    let path = "/files/resource.bin"
    private let state: Mutex<State>
    private let server: Mutex<TestOrigin?> = Mutex(nil)

    init(size: Int, seed: UInt8 = 7, bytesPerSecond: Int? = nil) throws {
        body = TestOrigin.pattern(count: size, seed: seed)
        state = Mutex(State(bytesPerSecond: bytesPerSecond))
        let origin = try TestOrigin { [weak self] request, responder in
            guard let self else { return }
            try self.answer(request, responder)
        }
        server.withLock { $0 = origin }
    }

    var url: String { server.withLock { $0?.url(path) ?? "" } }
    var bytesServed: Int { state.withLock { $0.bytesServed } }
    var arrivals: [Arrival] { state.withLock { $0.arrivals } }
    var openConnections: Int { server.withLock { $0?.openConnections ?? 0 } }
    /// The most responses that were being sent at the same time (idle kept-alive connections
    /// do not count, unlike the origin's connection count).
    var mostConcurrentResponses: Int { state.withLock { $0.mostResponding } }

    /// Changes the rate of bodies being sent now and later; nil is as fast as possible.
    func setRate(bytesPerSecond: Int?) {
        state.withLock { $0.bytesPerSecond = bytesPerSecond }
    }

    func stop() {
        let origin = server.withLock { origin in
            defer { origin = nil }
            return origin
        }
        origin?.stop()
    }

    private func answer(_ request: OriginRequest, _ responder: OriginResponder) throws {
        guard request.path == path, request.method == "GET" else {
            try responder.respond(status: 404, body: [])
            return
        }
        let arrival = Arrival(at: .now, range: request.header("Range"), ifRange: request.header("If-Range"))
        state.withLock { state in
            state.arrivals.append(arrival)
            state.responding += 1
            state.mostResponding = max(state.mostResponding, state.responding)
        }
        defer { state.withLock { $0.responding -= 1 } }
        var start = 0
        if let offset = arrival.rangeStart, arrival.ifRange == nil || arrival.ifRange == etag {
            guard offset < body.count else {
                try responder.respond(status: 416, headers: [("Content-Range", "bytes */\(body.count)"), ("ETag", etag)], body: [])
                return
            }
            start = offset
        }
        var headers = [("Content-Type", "application/octet-stream"), ("ETag", etag), ("Accept-Ranges", "bytes")]
        headers.append(("Content-Length", String(body.count - start)))
        if start > 0 { headers.append(("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")) }
        try responder.writeHead(status: start > 0 ? 206 : 200, headers: headers)

        var offset = start
        while offset < body.count {
            let rate = state.withLock { $0.bytesPerSecond }
            let slice = rate.map { max(1024, $0 / 50) } ?? 256 * 1024
            let end = min(body.count, offset + slice)
            try responder.write(Array(body[offset..<end]))
            let sent = end - offset
            state.withLock { $0.bytesServed += sent }
            if let rate { responder.pause(seconds: Double(sent) / Double(rate)) }
            offset = end
        }
    }
}
