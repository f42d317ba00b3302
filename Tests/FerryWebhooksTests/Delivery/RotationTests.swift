import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryWebhooks

@Suite("Secret rotation")
struct RotationTests {
    @Test("after a rotation both secrets sign, and the reference verifier accepts either")
    func bothSecretsSign() async throws {
        let receiver = try Receiver()
        try await WebhookHarness.run { ferry in
            let (session, oldSecret) = try await ferry.makeSession(delegateURL: receiver.url)
            let old = try #require(oldSecret)
            let task = try await ferry.makeTask(in: session)
            try await receiver.wait { $0.sequences(ofTask: task.id) == [1] }
            #expect(receiver.accepted[0].signature.split(separator: " ").count == 1)

            let endpoint = try #require(try await ferry.database.webhooks.delegate(tenantID: ferry.tenant.id, sessionID: session.id))
            let new = WebhookHarness.newSecret()
            _ = try await ferry.database.webhooks.rotateSecret(tenantID: ferry.tenant.id, endpointID: endpoint.id, newSecret: new)
            try await ferry.emit(.taskDidCompleteWithError, task: task)
            #expect(try await receiver.wait { $0.sequences(ofTask: task.id) == [1, 2] })
            let rotated = try #require(receiver.accepted.last)
            #expect(rotated.signature.split(separator: " ").count == 2)
            #expect(ReferenceVerifier.verifiesWithSwift(rotated, secret: old))
            #expect(ReferenceVerifier.verifiesWithSwift(rotated, secret: new))
            #expect(!ReferenceVerifier.verifiesWithSwift(rotated, secret: WebhookHarness.newSecret()))
            let messages = ReferenceVerifier.messages([rotated], secret: old) + ReferenceVerifier.messages([rotated], secret: new)
            #expect(try ReferenceVerifier.verify(messages) == 2)

            // Once the overlap is over only the new secret signs.
            _ = try await ferry.pool.withConnection { connection in
                try connection.execute("UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = $1", [endpoint.id])
            }
            try await ferry.emit(.taskDidFinishCollectingMetrics, task: task)
            #expect(try await receiver.wait { $0.sequences(ofTask: task.id) == [1, 2, 3] })
            let later = try #require(receiver.accepted.last)
            #expect(later.signature.split(separator: " ").count == 1)
            #expect(ReferenceVerifier.verifiesWithSwift(later, secret: new))
            #expect(!ReferenceVerifier.verifiesWithSwift(later, secret: old))
        }
    }
}
