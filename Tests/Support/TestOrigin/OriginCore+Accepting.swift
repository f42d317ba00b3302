import Foundation

extension OriginCore {
    /// The accept thread: one connection thread per client until `stop()` shuts the listener.
    func acceptConnections(on listener: Int32) {
        while !isStopping {
            let fd: Int32
            do {
                fd = try OriginSocket.accept(listener)
            } catch {
                if isStopping { return }
                // Out of descriptors or a client that vanished before accept: try again.
                Thread.sleep(forTimeInterval: 0.01)
                continue
            }
            guard let index = register(fd) else { return }
            do {
                let thread = try OriginThread.start { [self] in
                    OriginConnection(fd: fd, index: index, core: self).serve()
                }
                state.withLock { $0.connectionThreads.append(thread) }
            } catch {
                unregister(index: index, fd: fd, abortively: true)
            }
        }
    }
}
