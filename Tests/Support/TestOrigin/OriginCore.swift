import Synchronization

/// The state shared by the accept thread, the connection threads and the test.
///
/// `TestOrigin` owns this; the threads hold it rather than the `TestOrigin`, so a test that
/// forgets `stop()` still gets the threads cleaned up when the origin is released.
final class OriginCore: Sendable {
    struct State {
        var requests: [OriginRequest] = []
        /// Live connections by index. File descriptors are only closed while holding the lock
        /// and removed in the same step, so `stop()` never shuts down a reused descriptor.
        var openConnections: [Int: Int32] = [:]
        var connectionsAccepted = 0
        var maxConcurrentConnections = 0
        var isStopping = false
        var connectionThreads: [OriginThread] = []
        var issuedNonces: Set<String> = []
        var nonceCounter: UInt64 = 0
    }

    let handler: TestOrigin.Handler
    let state = Mutex(State())

    init(handler: @escaping TestOrigin.Handler) {
        self.handler = handler
    }

    var isStopping: Bool { state.withLock { $0.isStopping } }

    /// Records a newly accepted connection; nil (and the socket closed) when stopping.
    func register(_ fd: Int32) -> Int? {
        state.withLock { state in
            if state.isStopping {
                OriginSocket.close(fd)
                return nil
            }
            let index = state.connectionsAccepted
            state.connectionsAccepted += 1
            state.openConnections[index] = fd
            state.maxConcurrentConnections = max(state.maxConcurrentConnections, state.openConnections.count)
            return index
        }
    }

    /// Closes the connection's descriptor and forgets it, atomically with respect to `stop()`.
    func unregister(index: Int, fd: Int32, abortively: Bool) {
        state.withLock { state in
            state.openConnections[index] = nil
            if abortively { OriginSocket.setLingerZero(fd) }
            OriginSocket.close(fd)
        }
    }

    func record(_ request: OriginRequest) {
        state.withLock { $0.requests.append(request) }
    }

    /// Marks the origin as stopping and wakes every connection blocked in `recv` or `send`.
    func shutDownConnections() {
        state.withLock { state in
            state.isStopping = true
            for fd in state.openConnections.values {
                OriginSocket.shutdownBothDirections(fd)
            }
        }
    }

    /// A fresh Digest nonce, remembered so a forged or stale one is refused.
    func issueNonce(realm: String) -> String {
        state.withLock { state in
            state.nonceCounter += 1
            let nonce = MD5.hex(Array("\(realm):\(state.nonceCounter):\(UInt64.random(in: .min ... .max))".utf8))
            state.issuedNonces.insert(nonce)
            return nonce
        }
    }

    func isIssued(nonce: String) -> Bool {
        state.withLock { $0.issuedNonces.contains(nonce) }
    }
}
