import FerryCore
import Foundation
import Glibc
import Testing

/// `waitsForConnectivity` waits for the network (a connect that times out), not for an origin
/// that answered (refused, or a name that does not resolve).
@Suite("waitsForConnectivity: what is waited out, and what the delegate hears of it", .sharedHarnesses)
struct WaitsForConnectivityTests {
    @Test("refused and unknown host fail at once with their own codes, without isWaitingForConnectivity", arguments: [
        ("http://127.0.0.1:1/file", -1004), ("http://nowhere.invalid/file", -1003),
    ])
    func definitiveFailuresDoNotWait(_ url: String, _ code: Int) async throws {
        try await APIHarness.runWithEngine { api, _ in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession(["kind": "default", "waitsForConnectivity": true])
            let started = ContinuousClock.now
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": .string(url)], "resume": true])
            let done = try await tenant.task(task.id, wait: 15)
            #expect(done.state == "completed", "a definitive failure is not waited out")
            #expect(done.error?.code == code)
            #expect(ContinuousClock.now - started < .seconds(10))
            let events = try await tenant.call(.get, "/v1/tasks/\(task.id)/events", expecting: .ok, as: ListReply<JSONValue>.self)
            let types = events.data.compactMap { $0["type"]?.stringValue }
            #expect(!types.contains("task.isWaitingForConnectivity"), "\(types)")
            #expect(types.contains("task.didCompleteWithError"))
        }
    }

    @Test("an origin out of reach: isWaitingForConnectivity once however many waits, and never in a background session", .timeLimit(.minutes(1)))
    func waitingIsAnnouncedOnce() async throws {
        let unreachable = try FullBacklogListener()
        try await APIHarness.runWithEngine(configure: { engine in
            engine.retryPolicy = TransferRetryPolicy(baseDelay: .milliseconds(100), multiplier: 1, maximumDelay: .milliseconds(100))
        }) { api, _ in
            let tenant = try await api.makeTenant()
            let url = JSONValue.string("http://127.0.0.1:\(unreachable.port)/file")
            for kind in ["default", "background"] {
                var configuration: [String: JSONValue] = ["kind": .string(kind), "waitsForConnectivity": true, "timeoutIntervalForResource": 3]
                if kind == "background" { configuration["identifier"] = "waiting" }
                let session = try await tenant.createSession(.object(configuration))
                let started = ContinuousClock.now
                let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": url, "timeoutInterval": 0.3], "resume": true])
                let done = try await tenant.task(task.id, wait: 20)
                // Waited out until the resource deadline, not failed at the first timed-out connect.
                #expect(ContinuousClock.now - started >= .seconds(2.5), "\(kind): ended after \(ContinuousClock.now - started)")
                #expect(done.state == "completed", "\(kind): waited past its resource deadline")
                #expect(done.error?.code == -1001, "\(kind): \(String(describing: done.error))")
                let events = try await tenant.call(.get, "/v1/tasks/\(task.id)/events", expecting: .ok, as: ListReply<JSONValue>.self)
                let waits = events.data.filter { $0["type"]?.stringValue == "task.isWaitingForConnectivity" }.count
                // Each attempt's connect times out after 0.3 s and the next follows 0.1 s later:
                // several waits before the 3 s deadline, one event at most.
                #expect(waits == (kind == "default" ? 1 : 0), "\(kind): \(waits) isWaitingForConnectivity events: \(events.data.compactMap { $0["type"]?.stringValue })")
            }
        }
    }
}

/// A listener whose accept queue is full: the kernel drops every further connection's SYN, so
/// a connect to it times out, as when the network keeps an origin out of reach.
private final class FullBacklogListener: Sendable {
    let port: Int
    private let sockets: [Int32]

    init() throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        var opened: [Int32] = []
        func open() throws -> Int32 {
            let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw POSIXError(.EMFILE) }
            opened.append(socket)
            return socket
        }
        do {
            let listener = try open()
            // A queue of one holds two connections (Linux drops a SYN once more than the backlog
            // wait): two that are never accepted fill it, without relying on SYN cookies.
            let listening = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(listener, socketAddress, length) == 0 && listen(listener, 1) == 0
                        && getsockname(listener, socketAddress, &length) == 0
                }
            }
            guard listening else { throw POSIXError(.EADDRNOTAVAIL) }
            for _ in 0..<2 {
                let filler = try open()
                let connected = withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) == 0 }
                }
                guard connected else { throw POSIXError(.ECONNREFUSED) }
            }
        } catch {
            for socket in opened { close(socket) }
            throw error
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        sockets = opened
    }

    deinit {
        for socket in sockets { close(socket) }
    }
}
