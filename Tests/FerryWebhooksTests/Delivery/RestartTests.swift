import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWebhooks

@Suite("Delivery across restarts")
struct RestartTests {
    @Test("events written while the dispatcher is stopped are delivered after it starts again, in order")
    func nothingLostNothingOutOfOrder() async throws {
        let receiver = try Receiver { _ in Receiver.Reply(delay: 0.01) }
        try await WebhookHarness.run { ferry in
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let tasks = try await (0..<4).asyncMap { _ in try await ferry.makeTask(in: session) }
            for round in 0..<5 {
                for task in tasks { try await ferry.emit(.downloadTaskDidWriteData, task: task, data: ["round": .number(Double(round))]) }
            }
            try await receiver.wait { $0.accepted.count >= 6 }
            await ferry.stop()
            let deliveredBeforeRestart = receiver.accepted.count
            for round in 5..<10 {
                for task in tasks { try await ferry.emit(.downloadTaskDidWriteData, task: task, data: ["round": .number(Double(round))]) }
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(receiver.accepted.count == deliveredBeforeRestart, "nothing is sent while stopped")

            try await ferry.start { $0.instanceID = "hooks-test-2" }
            let expected = (1...Int64(11)).map { $0 }
            #expect(try await receiver.wait { receiver in tasks.allSatisfy { Set(receiver.sequences(ofTask: $0.id)).count == 11 } })
            for task in tasks {
                let arrived = receiver.sequences(ofTask: task.id)
                #expect(arrived == arrived.sorted(), "out of order for \(task.id): \(arrived)")
                #expect(Array(Set(arrived)).sorted() == expected)
            }
        }
    }

    @Test("two instances share the work without sending an event twice or out of order")
    func twoInstances() async throws {
        let receiver = try Receiver { _ in Receiver.Reply(delay: Double.random(in: 0...0.01)) }
        try await WebhookHarness.run { ferry in
            let second = try await ferry.startAnother(instanceID: "hooks-test-b")
            let (session, _) = try await ferry.makeSession(delegateURL: receiver.url)
            let tasks = try await (0..<6).asyncMap { _ in try await ferry.makeTask(in: session) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in tasks {
                    group.addTask {
                        for _ in 0..<8 { try await ferry.emit(.downloadTaskDidWriteData, task: task) }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await receiver.wait { receiver in tasks.allSatisfy { receiver.sequences(ofTask: $0.id).count >= 9 } })
            try await Task.sleep(for: .milliseconds(200))
            for task in tasks {
                #expect(receiver.sequences(ofTask: task.id) == (1...Int64(9)).map { $0 })
            }
            await second.stop()
        }
    }
}
