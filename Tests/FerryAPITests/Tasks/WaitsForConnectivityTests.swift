import FerryCore
import Foundation
import Testing

/// `waitsForConnectivity` waits for the network, not for an origin that answered.
@Suite("waitsForConnectivity does not wait out a refused connection or an unknown host", .sharedHarnesses)
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
}
