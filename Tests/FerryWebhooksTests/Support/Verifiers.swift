import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Checks deliveries against the Standard Webhooks reference verifier (the `standardwebhooks`
/// Python package, `pip install standardwebhooks`), run as a separate process: Ferry's own
/// `WebhookSignature.verify` could share a misunderstanding with its signer; this cannot.
enum ReferenceVerifier {
    struct Message: Encodable {
        var secret: String
        var id: String
        var timestamp: String
        var signature: String
        var body: String
    }

    private static let script = """
        import json, sys
        from standardwebhooks.webhooks import Webhook
        messages = json.load(open(sys.argv[1]))
        verified = 0
        for m in messages:
            headers = {"webhook-id": m["id"], "webhook-timestamp": m["timestamp"], "webhook-signature": m["signature"]}
            Webhook(m["secret"]).verify(m["body"], headers)
            verified += 1
        print(verified)
        """

    /// How many messages the reference verifier accepted (it stops at the first it rejects).
    static func verify(_ messages: [Message]) throws -> Int {
        let directory = URL(fileURLWithPath: try TestScratch.folder(named: "verify"))
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("messages.json")
        try JSONEncoder().encode(messages).write(to: input)
        let outcome = try PythonScript.run(script, arguments: [input.path])
        if outcome.status != 0 {
            Issue.record("the reference verifier failed (is `standardwebhooks` installed? pip install standardwebhooks): \(outcome.errors)")
            return 0
        }
        return Int(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    static func messages(_ accepted: [Receiver.Accepted], secret: String) -> [Message] {
        accepted.map {
            Message(secret: secret, id: $0.id, timestamp: $0.timestamp, signature: $0.signature, body: String(decoding: $0.body, as: UTF8.self))
        }
    }

    /// Ferry's own verifier, on every accepted request.
    static func verifiesWithSwift(_ accepted: Receiver.Accepted, secret: String) -> Bool {
        guard let key = try? WebhookSecret.parse(secret), let timestamp = Int(accepted.timestamp) else { return false }
        return WebhookSignature.verify(header: accepted.signature, id: accepted.id, timestamp: timestamp, body: accepted.body, secrets: [key])
    }
}
