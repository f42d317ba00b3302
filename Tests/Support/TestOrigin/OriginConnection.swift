import Foundation

/// One accepted connection, owned by its own thread: buffered reads, writes, and the two
/// ways of ending it (FIN or RST).
final class OriginConnection {
    let fd: Int32
    let index: Int
    let core: OriginCore
    private(set) var isClosed = false

    /// Received bytes not yet consumed; `readOffset` marks the first unconsumed one.
    private var buffer: [UInt8] = []
    private var readOffset = 0
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    init(fd: Int32, index: Int, core: OriginCore) {
        self.fd = fd
        self.index = index
        self.core = core
    }

    // MARK: Reading

    var unreadCount: Int { buffer.count - readOffset }

    /// Reads more bytes from the peer; false at end of stream.
    func fill() throws -> Bool {
        guard !isClosed else { throw OriginError.connectionClosed }
        if readOffset > 0 && readOffset >= buffer.count / 2 {
            buffer.removeFirst(readOffset)
            readOffset = 0
        }
        let count = try OriginSocket.receive(fd, into: &scratch)
        guard count > 0 else { return false }
        buffer.append(contentsOf: scratch[0..<count])
        return true
    }

    /// Offset (relative to the unread bytes) where `delimiter` starts, reading until it appears
    /// or `limit` unread bytes are buffered without it.
    func find(_ delimiter: [UInt8], limit: Int) throws -> Int? {
        // Relative to `readOffset`, because `fill()` may move the unread bytes to the front.
        var searched = 0
        while true {
            if let found = Self.search(buffer, for: delimiter, from: readOffset + searched) {
                return found - readOffset
            }
            if unreadCount > limit { throw OriginError.requestHeadTooLarge }
            searched = max(0, unreadCount - delimiter.count + 1)
            guard try fill() else { return nil }
        }
    }

    /// Removes and returns the next `count` unread bytes, reading as needed.
    func take(_ count: Int) throws -> ArraySlice<UInt8> {
        while unreadCount < count {
            guard try fill() else { throw OriginError.connectionClosed }
        }
        let slice = buffer[readOffset..<(readOffset + count)]
        readOffset += count
        return slice
    }

    private static func search(_ haystack: [UInt8], for needle: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }

    // MARK: Writing

    func send(_ bytes: ArraySlice<UInt8>) throws {
        guard !isClosed else { throw OriginError.connectionClosed }
        guard !bytes.isEmpty else { return }
        try OriginSocket.send(fd, bytes)
    }

    // MARK: Ending

    /// Orderly close: FIN after everything written, then a short wait for the peer's FIN, so the
    /// kernel does not turn the close into a RST because of unread request bytes.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        OriginSocket.shutdownWriting(fd)
        let deadline = Date().addingTimeInterval(0.5)
        while Date() < deadline, !core.isStopping {
            guard let ready = try? OriginSocket.waitReadable(fd, milliseconds: 20) else { break }
            if !ready { continue }
            guard let count = try? OriginSocket.receive(fd, into: &scratch), count > 0 else { break }
        }
        core.unregister(index: index, fd: fd, abortively: false)
    }

    /// Abortive close with RST. Waits (up to a second) until the peer has acknowledged every
    /// byte written, because a RST discards unsent data and tests count the bytes that arrived.
    func reset() {
        guard !isClosed else { return }
        isClosed = true
        let deadline = Date().addingTimeInterval(1)
        while Date() < deadline, !core.isStopping, let pending = try? OriginSocket.unacknowledgedBytes(fd), pending > 0 {
            Thread.sleep(forTimeInterval: 0.001)
        }
        core.unregister(index: index, fd: fd, abortively: true)
    }
}
