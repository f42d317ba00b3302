import FerryCore
import Foundation
import Synchronization
import TestOrigin

/// A webhook receiver on loopback whose answers a test scripts, remembering what it accepted.
final class Receiver: Sendable {
    /// How to answer one request.
    struct Reply: Sendable {
        var status = 200
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        /// Stall this long before answering (a slow or dead endpoint).
        var delay: Double = 0

        static let ok = Reply()
        static func status(_ status: Int, headers: [(String, String)] = []) -> Reply { Reply(status: status, headers: headers) }
        static func json(_ text: String, status: Int = 200) -> Reply {
            Reply(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
        }
    }

    /// A request the receiver answered with a 2xx, decoded.
    struct Accepted: Sendable {
        var id: String
        var timestamp: String
        var signature: String
        var body: [UInt8]
        var type: String
        var taskID: String?
        var sessionID: String?
        var sequence: Int64
    }

    /// What the origin's threads and the test share.
    private final class State: Sendable {
        let script: Mutex<@Sendable (OriginRequest) -> Reply>
        let accepted = Mutex<[Accepted]>([])

        init(script: @escaping @Sendable (OriginRequest) -> Reply) {
            self.script = Mutex(script)
        }
    }

    let origin: TestOrigin
    private let state: State

    init(_ script: @escaping @Sendable (OriginRequest) -> Reply = { _ in .ok }) throws {
        let state = State(script: script)
        self.state = state
        origin = try TestOrigin { request, responder in
            let reply = state.script.withLock { $0 }(request)
            if reply.delay > 0 { responder.pause(seconds: reply.delay) }
            if (200..<300).contains(reply.status), let decoded = Receiver.decode(request) {
                state.accepted.withLock { $0.append(decoded) }
            }
            try responder.respond(status: reply.status, headers: reply.headers, body: reply.body)
        }
    }

    deinit {
        origin.stop()
    }

    var url: String { origin.url("/hooks") }

    /// Changes how later requests are answered.
    func answer(_ script: @escaping @Sendable (OriginRequest) -> Reply) {
        state.script.withLock { $0 = script }
    }

    var requests: [OriginRequest] { origin.requests }
    var accepted: [Accepted] { state.accepted.withLock { $0 } }

    /// Each event once, at its first acceptance. Deliveries are at least once: an answer slower
    /// than the timeout is sent again under the same webhook-id, and `accepted` keeps both.
    var acceptedEvents: [Accepted] {
        var seen = Set<String>()
        return accepted.filter { seen.insert($0.id).inserted }
    }

    /// The sequences of one task's events, in the order they first arrived: an order bug shows
    /// here, a delivery sent again after a slow answer does not.
    func sequences(ofTask taskID: String) -> [Int64] {
        acceptedEvents.filter { $0.taskID == taskID }.map(\.sequence)
    }

    /// Polls until `condition` holds or `timeout` passes; returns whether it held.
    @discardableResult
    func wait(timeout: Duration = .seconds(15), until condition: (Receiver) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    private static func decode(_ request: OriginRequest) -> Accepted? {
        guard let body = try? JSONValue.parse(request.body), let type = body["type"]?.stringValue,
              case .number(let sequence)? = body["data"]?["sequence"] else { return nil }
        return Accepted(
            id: request.header("webhook-id") ?? "", timestamp: request.header("webhook-timestamp") ?? "",
            signature: request.header("webhook-signature") ?? "", body: request.body, type: type,
            taskID: body["data"]?["taskId"]?.stringValue, sessionID: body["data"]?["sessionId"]?.stringValue,
            sequence: Int64(sequence)
        )
    }
}
