import Crypto

/// A digest of a request body, so a retried request with the same `Idempotency-Key` can be told
/// apart from a different request reusing the key.
public enum RequestFingerprint {
    public static func of(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }
}
