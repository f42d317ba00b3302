/// A listening socket on loopback and the thread that accepts its connections: what the test
/// origin and the tunnelling proxy both start with and stop by.
struct OriginListener: Sendable {
    let descriptor: Int32
    let port: Int
    private let thread: OriginThread

    /// Listens on 127.0.0.1 (or ::1) at once and hands the socket to `accept` on a thread of its own.
    static func start(ipv6: Bool, accept: @escaping @Sendable (Int32) -> Void) throws -> OriginListener {
        let (descriptor, port) = try OriginSocket.makeListener(ipv6: ipv6)
        do {
            return OriginListener(descriptor: descriptor, port: port, thread: try OriginThread.start { accept(descriptor) })
        } catch {
            OriginSocket.close(descriptor)
            throw error
        }
    }

    /// Ends the accepting (its `accept` returns) and closes the socket.
    func stop() {
        OriginSocket.shutdownBothDirections(descriptor)
        thread.join()
        OriginSocket.close(descriptor)
    }
}
