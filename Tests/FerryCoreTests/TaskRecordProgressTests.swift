import FerryCore
import Foundation
import Testing

@Suite("A task's progress from counts a server or a tenant chose")
struct TaskRecordProgressTests {
    private func task(received: Int64, sent: Int64, expectedToReceive: Int64, expectedToSend: Int64) -> TaskRecord {
        TaskRecord(
            id: "tsk_1", tenantID: "ten_1", sessionID: "ses_1", taskIdentifier: 1, kind: .upload, state: .running,
            priority: 0.5, taskDescription: nil, earliestBeginDate: nil, originalRequest: TransferRequest(url: "http://a/"),
            currentRequest: nil, response: nil, countOfBytesReceived: received, countOfBytesSent: sent,
            countOfBytesExpectedToReceive: expectedToReceive, countOfBytesExpectedToSend: expectedToSend,
            error: nil, hasDownloadedFile: false, createdAt: Date(), startedAt: nil, completedAt: nil
        )
    }

    @Test("Content-Length: 9223372036854775807 plus bytes to send does not trap (issue 17)")
    func extremeCounts() {
        let huge = task(received: 10, sent: 5, expectedToReceive: .max, expectedToSend: 5)
        #expect(huge.fractionCompleted >= 0 && huge.fractionCompleted < 0.001)
        let everything = task(received: .max, sent: .max, expectedToReceive: .max, expectedToSend: .max)
        #expect(everything.fractionCompleted == 1)
        let negative = task(received: .min, sent: -1, expectedToReceive: .min, expectedToSend: .max)
        #expect(negative.fractionCompleted == 0)
        #expect(task(received: 50, sent: 50, expectedToReceive: 100, expectedToSend: 100).fractionCompleted == 0.5)
    }
}
