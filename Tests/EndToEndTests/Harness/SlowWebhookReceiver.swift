import Foundation
import Synchronization
import TestOrigin

/// A delegate endpoint on loopback that notes every webhook when it arrives (before answering,
/// so a request whose sender dies mid-wait still counts as arrived) and answers 204 after a
/// random delay in `delay`: slow enough that deliveries are in flight whenever a test looks.
final class SlowWebhookReceiver: Sendable {
    private struct State {
        /// `webhook-id` (the event id) of every request, in arrival order; ids repeat for
        /// deliveries sent again.
        var arrivals: [String] = []
        var open = 0
        var mostOpen = 0
    }

    private let state = Mutex(State())
    private let origin: Mutex<TestOrigin?> = Mutex(nil)

    init(delay: ClosedRange<Double>) throws {
        let server = try TestOrigin { [weak self] request, responder in
            guard let self else { return }
            guard request.method == "POST", let id = request.header("webhook-id") else {
                try responder.respond(status: 400, body: [])
                return
            }
            self.state.withLock { state in
                state.arrivals.append(id)
                state.open += 1
                state.mostOpen = max(state.mostOpen, state.open)
            }
            responder.pause(seconds: Double.random(in: delay))
            // Closed before the answer is written: once the sender has the answer it may open
            // the next request at once, and must not find this one still counted.
            self.state.withLock { $0.open -= 1 }
            try responder.respond(status: 204, body: [])
        }
        origin.withLock { $0 = server }
    }

    deinit {
        stop()
    }

    var url: String { origin.withLock { $0?.url("/hooks") ?? "" } }
    var arrivals: [String] { state.withLock { $0.arrivals } }
    /// The most requests that were open at once, from all senders together.
    var mostOpen: Int { state.withLock { $0.mostOpen } }

    func stop() {
        let server = origin.withLock { origin in
            defer { origin = nil }
            return origin
        }
        server?.stop()
    }
}
