import CCurl
import Synchronization

/// A curl multi handle: drives many easy handles on the one thread that owns it.
///
/// Not `Sendable`, except through `waker`, which other threads use to interrupt `poll`.
public final class CurlMulti {
    private let handle: UnsafeMutableRawPointer
    private var attached: [UnsafeMutableRawPointer: CurlEasy] = [:]
    public let waker: CurlMultiWaker

    public init() throws {
        try CurlGlobal.ensureInitialised()
        guard let handle = curl_multi_init() else {
            throw CurlError(source: .multi, code: Int32(CURLM_INTERNAL_ERROR.rawValue), message: "curl_multi_init failed")
        }
        self.handle = handle
        self.waker = CurlMultiWaker(handle)
    }

    deinit {
        waker.invalidate()
        for easy in attached.keys {
            curl_multi_remove_handle(handle, easy)
        }
        curl_multi_cleanup(handle)
    }

    /// Connections kept open per host across all transfers of this handle (0: no limit).
    public func setMaxHostConnections(_ count: Int) throws {
        try CurlError.check(ferry_curl_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, count))
    }

    /// The size of the cache of idle connections kept for reuse.
    public func setMaxCachedConnections(_ count: Int) throws {
        try CurlError.check(ferry_curl_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, count))
    }

    public var transferCount: Int { attached.count }

    public func add(_ easy: CurlEasy) throws {
        try CurlError.check(curl_multi_add_handle(handle, easy.handle))
        attached[easy.handle] = easy
    }

    public func remove(_ easy: CurlEasy) throws {
        guard attached.removeValue(forKey: easy.handle) != nil else { return }
        try CurlError.check(curl_multi_remove_handle(handle, easy.handle))
    }

    /// Runs every transfer as far as it can go without blocking; callbacks fire from here.
    @discardableResult
    public func perform() throws -> Int {
        var running: Int32 = 0
        try CurlError.check(curl_multi_perform(handle, &running))
        return Int(running)
    }

    /// Blocks until a transfer has work to do, `timeoutMilliseconds` pass, `waker.wake()` is
    /// called, or `descriptor` (one of the caller's own, such as an inotify descriptor) becomes
    /// readable.
    public func poll(timeoutMilliseconds: Int, alsoWaitingFor descriptor: Int32? = nil) throws {
        let timeout = Int32(clamping: timeoutMilliseconds)
        guard let descriptor, descriptor >= 0 else {
            try CurlError.check(curl_multi_poll(handle, nil, 0, timeout, nil))
            return
        }
        var extra = curl_waitfd(fd: descriptor, events: Int16(truncatingIfNeeded: CURL_WAIT_POLLIN), revents: 0)
        try CurlError.check(curl_multi_poll(handle, &extra, 1, timeout, nil))
    }

    /// The transfers that finished since the last call, with curl's result code.
    /// The handles stay attached: the caller removes (or reuses) them.
    public func completedTransfers() -> [(easy: CurlEasy, result: Int32)] {
        var finished: [(CurlEasy, Int32)] = []
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(handle, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE,
                  let pointer = message.pointee.easy_handle,
                  let easy = attached[pointer]
            else { continue }
            finished.append((easy, Int32(message.pointee.data.result.rawValue)))
        }
        return finished
    }
}

/// Wakes a `CurlMulti` blocked in `poll` from any thread (`curl_multi_wakeup` is thread-safe).
/// After the multi handle is gone, waking does nothing instead of touching freed memory.
public final class CurlMultiWaker: Sendable {
    private struct Handle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private let handle: Mutex<Handle?>

    init(_ pointer: UnsafeMutableRawPointer) {
        handle = Mutex(Handle(pointer: pointer))
    }

    public func wake() {
        handle.withLock { handle in
            if let handle { _ = curl_multi_wakeup(handle.pointer) }
        }
    }

    func invalidate() {
        handle.withLock { $0 = nil }
    }
}
