import Crypto

/// The shape shared by tenant API keys and the operator token:
/// `<prefix><30 base62 random symbols><6 base62 symbols of the CRC-32 of the random part>`.
///
/// The first 8 random symbols find the key's row and are stored in clear (and shown to
/// operators); the other 22 carry 22 · log2(62) ≈ 131 bits that only the key's holder knows.
/// Keys made before had 22 random symbols in all, 8 of them the lookup prefix (83 secret bits):
/// they are still accepted. The visible prefix tells people and secret scanners what leaked;
/// the checksum lets a mistyped or invented key be refused before any database work.
struct ChecksummedToken: Sendable {
    static let randomLength = 30
    /// The random part of keys made before the lookup prefix was counted apart.
    static let earlierRandomLength = 22
    static let checksumLength = 6
    static let lookupPrefixLength = 8

    let prefix: String

    func generate(using generator: inout some RandomNumberGenerator) -> String {
        let random = Base62.randomString(length: Self.randomLength, using: &generator)
        return prefix + random + Self.checksum(of: random)
    }

    func parse(_ presented: String) -> ParsedAPIKey? {
        let bytes = Array(presented.utf8)
        let prefixBytes = Array(prefix.utf8)
        let randomLength = bytes.count - prefixBytes.count - Self.checksumLength
        guard randomLength == Self.randomLength || randomLength == Self.earlierRandomLength,
              bytes.starts(with: prefixBytes)
        else { return nil }
        let body = bytes[prefixBytes.count...]
        guard body.allSatisfy(Base62.contains) else { return nil }
        let random = String(decoding: body.prefix(randomLength), as: UTF8.self)
        let checksum = String(decoding: body.suffix(Self.checksumLength), as: UTF8.self)
        guard checksum == Self.checksum(of: random) else { return nil }
        return ParsedAPIKey(
            lookupPrefix: String(random.prefix(Self.lookupPrefixLength)),
            hash: Self.hash(presented)
        )
    }

    static func checksum(of random: String) -> String {
        Base62.encode(CRC32.checksum(random.utf8), width: checksumLength)
    }

    /// SHA-256 of the whole key text. A fast hash is right here: with ≥128 random bits there is
    /// nothing to brute-force, so a slow password hash would only cost every request.
    static func hash(_ key: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(key.utf8)))
    }
}

/// A key or token whose shape and checksum are valid: what the authenticator looks up.
/// Holds no copy of the key itself.
public struct ParsedAPIKey: Equatable, Sendable {
    /// The first 8 symbols of the random part, stored in clear to find the row.
    public let lookupPrefix: String
    /// SHA-256 of the full key text; compare with the stored hash using `constantTimeEquals`.
    public let hash: [UInt8]
}

/// The operator token parses into the same two parts as an API key.
public typealias ParsedAdminToken = ParsedAPIKey
