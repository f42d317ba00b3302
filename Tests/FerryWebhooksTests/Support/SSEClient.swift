import Foundation
import Glibc
import Synchronization

/// A minimal Server-Sent Events client over a plain socket, reading on a thread of its own (so
/// a blocking `recv` never occupies a test's cooperative thread). Decodes the chunked body and
/// collects `id`/`event`/`data` fields per event.
final class SSEClient: Sendable {
    struct Event: Sendable, Equatable {
        var id: String?
        var type: String?
        var data: String
    }

    private struct State {
        var status: Int?
        var contentType: String?
        var events: [Event] = []
        var comments = 0
        var isClosed = false
    }

    private let socket: Int32
    private let state = Mutex(State())

    init(port: Int, path: String, headers: [(String, String)]) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        socket = fd
        let thread = Thread { [self] in read() }
        thread.start()
    }

    deinit {
        close(socket)
    }

    /// Ends the stream from the client's side.
    func disconnect() {
        shutdown(socket, Int32(SHUT_RDWR))
    }

    var status: Int? { state.withLock { $0.status } }
    var contentType: String? { state.withLock { $0.contentType } }
    var events: [Event] { state.withLock { $0.events } }
    var isClosed: Bool { state.withLock { $0.isClosed } }

    @discardableResult
    func wait(timeout: Duration = .seconds(10), until condition: (SSEClient) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    // MARK: Reading, on the client's thread

    private func read() {
        var raw: [UInt8] = []
        var head: [UInt8]?
        var chunked = false
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            raw += buffer[0..<count]
            if head == nil, let end = Self.find([13, 10, 13, 10], in: raw) {
                head = Array(raw[..<end])
                raw.removeFirst(end + 4)
                let text = String(decoding: head ?? [], as: UTF8.self)
                let lines = text.components(separatedBy: "\r\n")
                let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
                let fields = lines.dropFirst().map { $0.lowercased() }
                chunked = fields.contains { $0.hasPrefix("transfer-encoding:") && $0.contains("chunked") }
                let contentType = fields.first { $0.hasPrefix("content-type:") }.map { String($0.dropFirst(13)).trimmingCharacters(in: .whitespaces) }
                state.withLock {
                    $0.status = status
                    $0.contentType = contentType
                }
            }
            guard head != nil else { continue }
            if chunked {
                while let lineEnd = Self.find([13, 10], in: raw),
                      let size = Int(String(decoding: raw[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? "", radix: 16),
                      raw.count >= lineEnd + 2 + size + 2 {
                    body += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
                    raw.removeFirst(lineEnd + 2 + size + 2)
                }
            } else {
                body += raw
                raw.removeAll()
            }
            parseEvents(&body)
        }
        state.withLock { $0.isClosed = true }
    }

    /// Takes every complete event (ended by a blank line) off the front of `body`.
    private func parseEvents(_ body: inout [UInt8]) {
        while let end = Self.find([10, 10], in: body) {
            let block = String(decoding: body[..<end], as: UTF8.self)
            body.removeFirst(end + 2)
            var event = Event(id: nil, type: nil, data: "")
            var hasData = false
            var isComment = true
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") { continue }
                isComment = false
                if line.hasPrefix("id: ") { event.id = String(line.dropFirst(4)) }
                if line.hasPrefix("event: ") { event.type = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") {
                    event.data += (hasData ? "\n" : "") + line.dropFirst(6)
                    hasData = true
                }
            }
            state.withLock { state in
                if hasData { state.events.append(event) } else if isComment { state.comments += 1 }
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where Array(haystack[index..<(index + needle.count)]) == needle {
            return index
        }
        return nil
    }
}
