import Foundation
import Glibc
import Synchronization

/// An HTTP proxy on loopback that only tunnels, for HTTPS through a proxy: it answers
/// `CONNECT host:port` with 407 and `Proxy-Authenticate: Basic realm="…"` until the request
/// carries the expected `Proxy-Authorization`, then connects to the target (loopback only) and
/// relays bytes both ways until either side closes.
///
/// ```swift
/// let proxy = try TunnelProxy(realm: "gate", user: "ada", password: "lovelace")
/// defer { proxy.stop() }
/// ```
public final class TunnelProxy: Sendable {
    public let port: Int
    private let core: TunnelProxyCore
    private let listener: OriginListener

    /// Starts listening on 127.0.0.1 at once; `user` and `password` are the Basic credential the
    /// proxy accepts.
    public init(realm: String, user: String, password: String) throws {
        let core = TunnelProxyCore(
            realm: realm, expectedAuthorization: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        )
        listener = try OriginListener.start(ipv6: false) { core.acceptConnections(on: $0) }
        self.core = core
        self.port = listener.port
    }

    deinit {
        stop()
    }

    /// The `Proxy-Authorization` of every CONNECT received, in order (nil: none sent).
    public var connectAuthorizations: [String?] {
        core.state.withLock { $0.connects.map(\.authorization) }
    }

    /// The targets (`host:port`) of the tunnels opened.
    public var tunnelsOpened: [String] {
        core.state.withLock { $0.connects.filter(\.wasAccepted).map(\.target) }
    }

    /// Closes the listener and every connection, and waits for the proxy's threads.
    public func stop() {
        guard core.beginStopping() else { return }
        listener.stop()
        for thread in core.state.withLock({ state in defer { state.threads = [] }; return state.threads }) {
            thread.join()
        }
    }
}

/// What the proxy's threads share.
final class TunnelProxyCore: Sendable {
    struct Connect {
        var target: String
        var authorization: String?
        var wasAccepted: Bool
    }

    struct State {
        var connects: [Connect] = []
        var openSockets: Set<Int32> = []
        var threads: [OriginThread] = []
        var isStopping = false
    }

    let realm: String
    let expectedAuthorization: String
    let state = Mutex(State())

    init(realm: String, expectedAuthorization: String) {
        self.realm = realm
        self.expectedAuthorization = expectedAuthorization
    }

    /// Marks the proxy stopping and wakes every thread blocked on a socket. False when it was already.
    func beginStopping() -> Bool {
        state.withLock { state in
            guard !state.isStopping else { return false }
            state.isStopping = true
            for fd in state.openSockets { OriginSocket.shutdownBothDirections(fd) }
            return true
        }
    }

    func acceptConnections(on listener: Int32) {
        while true {
            guard let fd = try? OriginSocket.accept(listener) else {
                if state.withLock({ $0.isStopping }) { return }
                Thread.sleep(forTimeInterval: 0.01)
                continue
            }
            guard track(fd) else { return }
            let thread = try? OriginThread.start { [self] in
                serve(fd)
                untrack(fd)
            }
            if let thread { state.withLock { $0.threads.append(thread) } } else { untrack(fd) }
        }
    }

    /// Remembers a socket so `stop()` can wake whoever waits on it; false (and closed) when stopping.
    private func track(_ fd: Int32) -> Bool {
        state.withLock { state in
            guard !state.isStopping else {
                OriginSocket.close(fd)
                return false
            }
            state.openSockets.insert(fd)
            return true
        }
    }

    private func untrack(_ fd: Int32) {
        state.withLock { state in
            state.openSockets.remove(fd)
            OriginSocket.close(fd)
        }
    }

    /// Answers CONNECT requests on one client connection until one is let through (then relays)
    /// or the client leaves.
    private func serve(_ client: Int32) {
        var buffered: [UInt8] = []
        while let (head, rest) = readHead(client, buffered: buffered) {
            buffered = rest
            let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
            let requestLine = lines.first?.split(separator: " ") ?? []
            guard requestLine.count == 3, requestLine[0] == "CONNECT" else {
                try? OriginSocket.send(client, Array("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)[...])
                return
            }
            let target = String(requestLine[1])
            let authorization = lines.dropFirst().first { $0.lowercased().hasPrefix("proxy-authorization:") }
                .map { String($0.dropFirst("proxy-authorization:".count)).trimmingCharacters(in: .whitespaces) }
            let accepted = authorization == expectedAuthorization
            state.withLock { $0.connects.append(Connect(target: target, authorization: authorization, wasAccepted: accepted)) }
            guard accepted else {
                let refusal = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"\(realm)\"\r\n"
                    + "Content-Length: 0\r\n\r\n"
                do { try OriginSocket.send(client, Array(refusal.utf8)[...]) } catch { return }
                continue
            }
            guard let upstream = connectToLoopback(target), track(upstream) else {
                try? OriginSocket.send(client, Array("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)[...])
                return
            }
            defer { untrack(upstream) }
            do {
                try OriginSocket.send(client, Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)[...])
                if !buffered.isEmpty { try OriginSocket.send(upstream, buffered[...]) }
            } catch { return }
            relay(client, upstream)
            return
        }
    }

    /// Reads up to the blank line ending a request head; nil when the client closed first.
    private func readHead(_ fd: Int32, buffered: [UInt8]) -> (head: [UInt8], rest: [UInt8])? {
        var data = buffered
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = data.firstRange(of: Array("\r\n\r\n".utf8)) {
                return (Array(data[..<end.lowerBound]), Array(data[end.upperBound...]))
            }
            guard data.count < 65_536, let count = try? OriginSocket.receive(fd, into: &chunk), count > 0 else { return nil }
            data += chunk[..<count]
        }
    }

    /// Copies bytes both ways, each direction on its own thread, until both sides are done.
    private func relay(_ client: Int32, _ upstream: Int32) {
        let back = try? OriginThread.start { Self.copy(from: upstream, to: client) }
        Self.copy(from: client, to: upstream)
        back?.join()
    }

    /// Copies until `source` finishes sending, then passes the end on.
    private static func copy(from source: Int32, to destination: Int32) {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while let count = try? OriginSocket.receive(source, into: &chunk), count > 0 {
            guard (try? OriginSocket.send(destination, chunk[..<count])) != nil else { break }
        }
        OriginSocket.shutdownWriting(destination)
    }

    /// A TCP connection to `host:port` on 127.0.0.1 only: the proxy must not reach further.
    private func connectToLoopback(_ target: String) -> Int32? {
        let parts = target.split(separator: ":")
        guard parts.count == 2, parts[0] == "127.0.0.1", let port = UInt16(parts[1]) else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            Glibc.close(fd)
            return nil
        }
        return fd
    }
}
