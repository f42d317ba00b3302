import Foundation

/// Standard Webhooks signing secrets: `whsec_` + base64 of the key bytes.
public enum WebhookSecret {
    public static let prefix = "whsec_"
    /// Key sizes Ferry accepts (Standard Webhooks: 24 to 64 bytes).
    public static let acceptedByteCounts = 24...64

    /// A new secret of 32 random bytes. Pass a cryptographically secure generator
    /// (`SystemRandomNumberGenerator`) outside tests.
    public static func generate(using generator: inout some RandomNumberGenerator) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 {
            withUnsafeBytes(of: generator.next().littleEndian) { bytes.append(contentsOf: $0) }
        }
        return prefix + Data(bytes).base64EncodedString()
    }

    /// The key bytes of a `whsec_` secret. The error never repeats the secret.
    public static func parse(_ text: String) throws(WebhookSecretError) -> [UInt8] {
        guard text.hasPrefix(prefix) else { throw .missingPrefix }
        guard let data = Data(base64Encoded: String(text.dropFirst(prefix.count))) else {
            throw .notBase64
        }
        guard acceptedByteCounts.contains(data.count) else { throw .wrongLength(byteCount: data.count) }
        return Array(data)
    }
}

/// Why a webhook secret was refused.
public enum WebhookSecretError: Error, Equatable, Sendable {
    case missingPrefix
    case notBase64
    case wrongLength(byteCount: Int)
}

extension WebhookSecretError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .missingPrefix:
            return "a webhook secret must start with \"whsec_\""
        case .notBase64:
            return "a webhook secret must be \"whsec_\" followed by standard base64"
        case .wrongLength(let count):
            return "a webhook secret must decode to 24 to 64 bytes, not \(count)"
        }
    }
}
