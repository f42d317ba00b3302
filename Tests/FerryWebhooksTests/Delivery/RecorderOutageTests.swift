import FerryStore
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryWebhooks

@Suite("DeliveredAttemptRecorder: the database away")
struct RecorderOutageTests {
    @Test("cancelled while its batch cannot be written, it stops trying (the deliveries are sent again)", .timeLimit(.minutes(1)))
    func cancelledRecorderStopsTrying() async throws {
        let test = try await TestDatabase.make(poolSize: 1, connectTimeout: .milliseconds(100))
        let log = LogRecorder()
        let recorder = DeliveredAttemptRecorder(
            ledger: WebhookLedger(pool: test.database.pool, instanceID: "outage"), tryingFor: .seconds(30), logger: log.logger
        )
        let ended = Atomic<Bool>(false)
        let running = Task {
            await recorder.run { _ in }
            ended.store(true, ordering: .releasing)
        }

        try await test.beginOutage()
        let attempt = DeliveredAttempt(
            deliveryID: "dlv_outage", sessionID: "ses_outage", leaseToken: 1, startedAt: Date(), duration: .milliseconds(5),
            statusCode: 204, error: nil, responseExcerpt: nil
        )
        #expect(recorder.submit(attempt))
        try await Task.sleep(for: .milliseconds(300))
        // As at a cancelled shutdown: the service is cancelled, its delivery loop ends and closes.
        running.cancel()
        recorder.close()
        // A cancelled sleep returns at once: the batch was tried again and again, without a pause,
        // until the deliveries' leases (30 s here) were over.
        let deadline = ContinuousClock.now + .seconds(3)
        while !ended.load(ordering: .acquiring), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let endedInTime = ended.load(ordering: .acquiring)
        #expect(endedInTime, "the cancelled recorder went on trying")
        #expect(log.count("recording delivered attempts failed; trying again") <= 1)
        #expect(log.count("recording delivered attempts failed; they will be sent again") == 1)

        try await test.endOutage()
        await running.value
        await test.close()
    }
}
