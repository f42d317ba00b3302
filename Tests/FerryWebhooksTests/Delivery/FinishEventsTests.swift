import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWebhooks

@Suite("session.didFinishEvents for background sessions")
struct FinishEventsTests {
    @Test("sent once every delivery of an idle background session is done, and again after new events")
    func backgroundSessionFinishesEvents() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let resumeData = ResumeDataIssuer(signingKey: try await ferry.database.settings.resumeDataSigningKey())
            let (session, _) = try await ferry.makeSession(kind: .background, delegateURL: receiver.url)
            let task = try await ferry.makeTask(in: session)
            _ = try await ferry.database.tasks.apply(.cancel, tenantID: ferry.tenant.id, taskID: task.id, resumeData: resumeData)
            // The event is what must be once; a slow answer may be delivered twice.
            let finished = { (receiver: Receiver) in receiver.acceptedEvents.filter { $0.type == "session.didFinishEvents" } }
            #expect(try await receiver.wait { finished($0).count == 1 })
            // First arrivals: a delivery whose answer came after Ferry's timeout is sent again,
            // and on a loaded machine the first attempt may be recorded after everything else.
            let types = receiver.acceptedEvents.map(\.type)
            #expect(types.last == "session.didFinishEvents")
            #expect(types.dropLast().allSatisfy { $0.hasPrefix("task.") })
            #expect(finished(receiver).first?.sessionID == session.id)
            #expect(finished(receiver).first?.taskID == nil)
            try await Task.sleep(for: .milliseconds(400))
            #expect(finished(receiver).count == 1, "sent once until new events arrive: \(receiver.accepted.map { ($0.type, $0.id) })")

            _ = try await ferry.makeTask(in: session)
            #expect(try await receiver.wait { finished($0).count == 2 })
            #expect(receiver.acceptedEvents.last?.type == "session.didFinishEvents")
        }
    }

    @Test("not for a default session, nor while a task is running")
    func onlyIdleBackgroundSessions() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (plain, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let (background, _) = try await ferry.makeSession(kind: .background, delegateURL: receiver.url)
            let plainTask = try await ferry.makeTask(in: plain)
            let busyTask = try await ferry.makeTask(in: background)
            _ = try await ferry.pool.withConnection { connection in
                try connection.execute("UPDATE tasks SET state = 'running', lease_owner = 'elsewhere' WHERE id = $1", [busyTask.id])
            }
            try await ferry.emit(.downloadTaskDidWriteData, task: busyTask)
            #expect(try await receiver.wait { $0.sequences(ofTask: busyTask.id) == [1, 2] && $0.sequences(ofTask: plainTask.id) == [1] })
            try await Task.sleep(for: .milliseconds(400))
            #expect(!receiver.accepted.contains { $0.type == "session.didFinishEvents" })
        }
    }
}
