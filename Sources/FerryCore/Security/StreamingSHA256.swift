import Crypto

/// SHA-256 of a body that arrives in pieces (blob uploads), so it is never held whole.
public struct StreamingSHA256 {
    private var hasher = SHA256()

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    /// The digest as lowercase hex.
    public func finalize() -> String {
        hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
