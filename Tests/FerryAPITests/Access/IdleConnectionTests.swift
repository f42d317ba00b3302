import FerryAPI
import Foundation
import Testing

/// The API closes connections that stay silent (slowloris), but not answers in progress.
@Suite("Idle API connections are closed; long answers are not")
struct IdleConnectionTests {
    /// Trickles a request head one header every 0.2 s for up to 10 s; prints "closed SECONDS"
    /// when Ferry closes the connection, or "open" when it never does.
    static let slowloris = """
        import socket, sys, time
        connection = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
        connection.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: ferry\\r\\n")
        started = time.monotonic()
        outcome = "open"
        while time.monotonic() - started < 10:
            try:
                connection.sendall(b"X-Slow: %d\\r\\n" % int(time.monotonic() * 1000))
                connection.settimeout(0.2)
                if connection.recv(4096) == b"":
                    outcome = "closed %.1f" % (time.monotonic() - started); break
            except socket.timeout:
                pass
            except OSError:
                outcome = "closed %.1f" % (time.monotonic() - started); break
        print(outcome)
        """

    /// Opens a connection and sends nothing; prints the same.
    static let silent = """
        import socket, sys, time
        connection = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
        started = time.monotonic()
        try:
            print("closed %.1f" % (time.monotonic() - started) if connection.recv(1) == b"" else "data")
        except socket.timeout:
            print("open")
        """

    @Test("a request head trickled byte by byte, and a connection that sends nothing, are closed after the idle timeout")
    func slowClientsAreClosed() async throws {
        try await APIHarness.runFresh(server: .live(idleTimeout: .seconds(1))) { api in
            let port = try #require(api.http.port)

            async let trickled = PythonClient.run(Self.slowloris, arguments: ["\(port)"])
            async let silent = PythonClient.run(Self.silent, arguments: ["\(port)"])
            let (trickledOutcome, silentOutcome) = try await (trickled, silent)

            for outcome in [trickledOutcome, silentOutcome] {
                #expect(outcome.hasPrefix("closed "), "\(outcome)")
                if let seconds = Double(outcome.dropFirst("closed ".count)) {
                    #expect(seconds < 5, "closed after about the 1 s idle timeout: \(outcome)")
                }
            }
        }
    }

    @Test("a long-poll longer than the idle timeout still gets its answer")
    func longPollOutlivesIdleTimeout() async throws {
        try await APIHarness.runFresh(server: .live(idleTimeout: .seconds(1))) { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "data", "request": ["url": "http://example.com/a"]])
            let started = ContinuousClock.now

            let waited = try await tenant.task(task.id, wait: 3)

            #expect(waited.id == task.id)
            #expect(ContinuousClock.now - started >= .seconds(2.5), "the long-poll waited its time")
        }
    }
}
