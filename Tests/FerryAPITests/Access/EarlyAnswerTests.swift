import FerryAPI
import Foundation
import Testing

/// Clients that send a whole request body before reading (Python's urllib, asking
/// `Connection: close`) get Ferry's early answer — a 413 for a body over a route's limit, a
/// 401 for a wrong key — instead of waiting on a full socket until their own timeout.
@Suite("Early answers reach clients that send the whole body first")
struct EarlyAnswerTests {
    /// POSTs `size` bytes with urllib; prints the status, the Content-Type and the seconds it took.
    static let urllibPost = """
        import sys, time, urllib.request, urllib.error
        url, token, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
        body = b'{"name": "' + b'n' * (size - 12) + b'"}'
        request = urllib.request.Request(url, data=body, method="POST",
            headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        started = time.monotonic()
        try:
            answer = urllib.request.urlopen(request, timeout=20)
            status, kind, text = answer.status, answer.headers.get("Content-Type"), answer.read()
        except urllib.error.HTTPError as error:
            status, kind, text = error.code, error.headers.get("Content-Type"), error.read()
        except Exception as error:
            status, kind, text = 0, repr(error), b""
        print(status, kind, round(time.monotonic() - started, 2), text.decode("utf-8", "replace").replace("\\n", " "))
        """

    @Test("a 12 MiB POST from urllib gets its 413 problem+json, and a wrong key its 401")
    func oversizedBodyFromURLLib() async throws {
        try await APIHarness.runFresh(server: .live()) { api in
            let port = try #require(api.http.port)
            let tenant = try await api.makeTenant()
            let token = try #require(tenant.token)
            let size = 12 * 1024 * 1024

            let tooLarge = try await PythonClient.run(Self.urllibPost, arguments: ["http://127.0.0.1:\(port)/v1/sessions", token, "\(size)"])
            let unauthorized = try await PythonClient.run(Self.urllibPost, arguments: ["http://127.0.0.1:\(port)/v1/sessions", "fy_live_wrong", "\(size)"])

            #expect(tooLarge.hasPrefix("413 application/problem+json "), "\(tooLarge)")
            #expect(tooLarge.contains("at most"), "the detail names the limit: \(tooLarge)")
            #expect(unauthorized.hasPrefix("401 application/problem+json "), "\(unauthorized)")
            // Still serving: the drained connections left nothing behind.
            #expect(try await tenant.sessions().data.isEmpty)
        }
    }

    /// Sends a body of `size` bytes on a kept-alive connection, reads the answer, then asks
    /// `/healthz` on the same connection; prints both statuses.
    static let keptAlive = """
        import socket, sys
        port, token, size = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
        connection = socket.create_connection(("127.0.0.1", port), timeout=20)
        head = ("POST /v1/sessions HTTP/1.1\\r\\nHost: ferry\\r\\nAuthorization: Bearer %s\\r\\n"
                "Content-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n" % (token, size))
        connection.sendall(head.encode() + b"x" * size)
        def answer():
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                chunk = connection.recv(65536)
                if not chunk: return "closed"
                data += chunk
            headers, rest = data.split(b"\\r\\n\\r\\n", 1)
            length = int([l.split(b":")[1] for l in headers.split(b"\\r\\n") if l.lower().startswith(b"content-length:")][0])
            while len(rest) < length:
                chunk = connection.recv(65536)
                if not chunk: return "closed"
                rest += chunk
            return headers.split(b" ")[1].decode()
        first = answer()
        connection.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: ferry\\r\\n\\r\\n")
        print(first, answer())
        """

    @Test("after a 413 on a kept-alive connection the same connection serves the next request")
    func keptAliveAfterTooLarge() async throws {
        try await APIHarness.runFresh(server: .live()) { api in
            let port = try #require(api.http.port)
            let tenant = try await api.makeTenant()
            let token = try #require(tenant.token)

            let printed = try await PythonClient.run(Self.keptAlive, arguments: ["\(port)", token, "\(2 * 1024 * 1024)"])

            #expect(printed == "413 200", "\(printed)")
        }
    }
}
