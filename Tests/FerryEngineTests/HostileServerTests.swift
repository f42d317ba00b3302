import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import TestOrigin

/// What one origin server can send to crash or hold a worker (issue 17): every case must end
/// as an ordinary task outcome, with the instance alive.
@Suite("Hostile origin servers")
struct HostileServerTests {
    @Test("Content-Length: 9223372036854775807 on an upload: reading the task (its progress) does not trap")
    func hugeContentLength() async throws {
        let origin = try TestOrigin { _, responder in
            try responder.writeHead(status: 200, headers: [("Content-Length", "9223372036854775807"), ("Content-Type", "text/plain")])
            try responder.write(Array(repeating: UInt8(ascii: "a"), count: 1000))
            responder.pause(seconds: 15)
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let started = try await ferry.startTask(
                in: session, kind: .upload, url: origin.url("/huge"), method: "POST", uploadBody: Array(repeating: 7, count: 100)
            )
            let task = try await ferry.task(started.id) { $0.countOfBytesExpectedToReceive == .max }
            #expect(task.countOfBytesExpectedToReceive == .max)
            #expect(task.countOfBytesExpectedToSend == 100)
            // Before the fix this sum trapped: every read of the task crashed the reader.
            #expect(task.fractionCompleted >= 0 && task.fractionCompleted < 0.01)
        }
    }

    @Test("a 401 whose WWW-Authenticate holds 60,000 '=' is the task's response, not a stack overflow")
    func deepChallenge() async throws {
        let origin = try TestOrigin { _, responder in
            try responder.respond(
                status: 401, headers: [("WWW-Authenticate", "Basic realm=x, " + String(repeating: "=", count: 60_000))],
                body: Array("no".utf8)
            )
        }
        defer { origin.stop() }
        try await EngineHarness.run { ferry in
            let session = try await ferry.makeSession()
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/deep")).id)
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 401)
        }
    }
}
