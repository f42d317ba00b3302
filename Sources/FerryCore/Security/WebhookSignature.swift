import Crypto
import Foundation

/// Standard Webhooks signatures (https://www.standardwebhooks.com/):
/// `webhook-signature: v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`,
/// one space-separated entry per secret while a secret is being rotated.
public enum WebhookSignature {
    /// The `webhook-signature` header value: one `v1,` entry per secret, in order.
    public static func sign(id: String, timestamp: Int, body: [UInt8], secrets: [[UInt8]]) -> String {
        secrets
            .map { "v1," + Data(mac(id: id, timestamp: timestamp, body: body, secret: $0)).base64EncodedString() }
            .joined(separator: " ")
    }

    /// Whether any `v1` entry of `header` was made with any of `secrets` over exactly this
    /// id, timestamp and body. Entries of other versions are ignored. Comparison is constant
    /// time. Checking that `timestamp` is recent (replay protection) is the receiver's job.
    public static func verify(header: String, id: String, timestamp: Int, body: [UInt8], secrets: [[UInt8]]) -> Bool {
        let presented = header.split(separator: " ").compactMap { entry -> [UInt8]? in
            guard entry.hasPrefix("v1,"), let data = Data(base64Encoded: String(entry.dropFirst(3))) else { return nil }
            return Array(data)
        }
        var matched = false
        for secret in secrets {
            let expected = mac(id: id, timestamp: timestamp, body: body, secret: secret)
            for candidate in presented where constantTimeEquals(candidate, expected) {
                matched = true
            }
        }
        return matched
    }

    private static func mac(id: String, timestamp: Int, body: [UInt8], secret: [UInt8]) -> [UInt8] {
        var message = Array("\(id).\(timestamp).".utf8)
        message.append(contentsOf: body)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret))
        return Array(code)
    }
}
