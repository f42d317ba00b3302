import Synchronization

/// An HTTP/1.1 origin on loopback, in the test process, that answers with whatever a test's
/// handler writes — including stalls, short bodies and resets that a real server would only
/// produce by accident.
///
/// One accept thread and one thread per connection, all plain POSIX threads, so the origin
/// never competes with the tests for Swift's cooperative pool. Keep-alive, pipelined requests,
/// `Content-Length` and chunked request bodies and `Expect: 100-continue` are handled before
/// the handler runs; the handler sees the whole request.
///
/// ```swift
/// let origin = try TestOrigin { request, responder in
///     try responder.serveResource(TestOrigin.pattern(count: 1000), for: request, etag: "\"v1\"")
/// }
/// defer { origin.stop() }
/// ```
public final class TestOrigin: Sendable {
    /// Answers one request. Runs on the connection's thread; throwing before a response was
    /// started answers 500, throwing after it closes the connection.
    public typealias Handler = @Sendable (OriginRequest, OriginResponder) throws -> Void

    /// The ephemeral port the origin listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT` or `http://[::1]:PORT`, without a trailing slash.
    public let baseURL: String

    private let core: OriginCore
    private let listener: OriginListener
    private let isStopped = Mutex(false)

    /// Starts listening on 127.0.0.1 (or ::1) at once; the origin is ready when this returns.
    public init(ipv6: Bool = false, _ handler: @escaping Handler) throws {
        let core = OriginCore(handler: handler)
        listener = try OriginListener.start(ipv6: ipv6) { core.acceptConnections(on: $0) }
        self.core = core
        self.port = listener.port
        self.baseURL = ipv6 ? "http://[::1]:\(listener.port)" : "http://127.0.0.1:\(listener.port)"
    }

    deinit {
        stop()
    }

    /// `baseURL` + `path`; `path` should start with `/`.
    public func url(_ path: String) -> String {
        baseURL + path
    }

    /// Closes the listener and every live connection (mid-response or idle, stalls included)
    /// and waits for all the origin's threads to finish. Safe to call more than once.
    public func stop() {
        let wasStopped = isStopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        core.shutDownConnections()
        listener.stop()
        let threads = core.state.withLock { state in
            defer { state.connectionThreads = [] }
            return state.connectionThreads
        }
        for thread in threads {
            thread.join()
        }
    }

    // MARK: Observation

    /// Every request received, in order of arrival, bodies included.
    public var requests: [OriginRequest] {
        core.state.withLock { $0.requests }
    }

    /// The requests whose path (without query) is `path`.
    public func requests(path: String) -> [OriginRequest] {
        requests.filter { $0.path == path }
    }

    public var connectionsAccepted: Int {
        core.state.withLock { $0.connectionsAccepted }
    }

    /// The most connections that were open at the same time.
    public var maxConcurrentConnections: Int {
        core.state.withLock { $0.maxConcurrentConnections }
    }

    /// Connections open now. A client's close is seen a moment after the client returns.
    public var openConnections: Int {
        core.state.withLock { $0.openConnections.count }
    }
}
