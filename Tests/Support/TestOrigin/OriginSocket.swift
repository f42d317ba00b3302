import Glibc

/// The only place the test origin talks to the socket API.
///
/// Every call that can fail goes through `check(_:_:)`, which reads `errno` and throws
/// `OriginError.system`; nothing above this file sees a raw return code.
enum OriginSocket {
    /// Runs `body`, retrying on `EINTR`, and turns a negative result into a thrown error.
    @discardableResult
    static func check<T: BinaryInteger>(_ call: String, _ body: () -> T) throws -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw OriginError.system(call: call, code: code)
        }
    }

    /// A listening TCP socket on the loopback address, on a port the kernel picks.
    static func makeListener(ipv6: Bool) throws -> (fd: Int32, port: Int) {
        let family = ipv6 ? AF_INET6 : AF_INET
        let fd = try check("socket") { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if ipv6 {
                try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1)
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_addr = in6addr_loopback
                _ = try withUnsafePointer(to: &address) { pointer in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                        try check("bind") { bind(fd, raw, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
                    }
                }
            } else {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
                _ = try withUnsafePointer(to: &address) { pointer in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                        try check("bind") { bind(fd, raw, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                    }
                }
            }
            try check("listen") { listen(fd, SOMAXCONN) }
            return (fd, try boundPort(fd))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    private static func boundPort(_ fd: Int32) throws -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                try check("getsockname") { getsockname(fd, raw, &length) }
            }
        }
        if Int32(storage.ss_family) == AF_INET6 {
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// Waits for a client; the returned socket has Nagle disabled so stalls and throttles are
    /// seen by the client exactly when the handler writes. Close-on-exec keeps a child process
    /// from holding the connection open after the origin closes it (`accept4` is not exported
    /// by the Glibc module; Foundation's `Process` also closes inherited descriptors).
    static func accept(_ listener: Int32) throws -> Int32 {
        let fd = try check("accept") { Glibc.accept(listener, nil, nil) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        try? setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return fd
    }

    /// Reads what is available into `buffer`; 0 means the peer finished sending.
    static func receive(_ fd: Int32, into buffer: inout [UInt8]) throws -> Int {
        try buffer.withUnsafeMutableBytes { raw in
            try check("recv") { recv(fd, raw.baseAddress, raw.count, 0) }
        }
    }

    /// Writes all of `bytes`; `MSG_NOSIGNAL` turns a vanished peer into `EPIPE` instead of a
    /// process-killing `SIGPIPE`.
    static func send(_ fd: Int32, _ bytes: ArraySlice<UInt8>) throws {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = try bytes[offset...].withUnsafeBytes { raw in
                try check("send") { Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) }
            }
            offset += written
        }
    }

    /// True when `fd` has something to read (or EOF) within `milliseconds`.
    static func waitReadable(_ fd: Int32, milliseconds: Int32) throws -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return try check("poll") { poll(&descriptor, 1, milliseconds) } > 0
    }

    /// Bytes written but not yet acknowledged by the peer (`SIOCOUTQ`).
    static func unacknowledgedBytes(_ fd: Int32) throws -> Int {
        var pending: Int32 = 0
        try check("ioctl(SIOCOUTQ)") { ioctl(fd, UInt(TIOCOUTQ), &pending) }
        return Int(pending)
    }

    /// Sends FIN after what is queued; reads still work.
    static func shutdownWriting(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Wakes any thread blocked in `recv`, `send` or `accept` on `fd`.
    static func shutdownBothDirections(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Makes the next `close` send RST instead of FIN.
    static func setLingerZero(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws {
        var value = value
        try check("setsockopt") { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }
}
