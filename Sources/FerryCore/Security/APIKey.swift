/// Tenant API keys: `fy_live_` + 22 base62 random symbols + 6 base62 checksum symbols.
///
/// Shown once at creation; only `lookupPrefix` and `hash` are stored.
public enum APIKey {
    public static let prefix = "fy_live_"
    private static let scheme = ChecksummedToken(prefix: prefix)

    /// A new key (≥128 random bits).
    public static func generate(using generator: inout some RandomNumberGenerator) -> String {
        scheme.generate(using: &generator)
    }

    /// The key's lookup prefix and hash, or `nil` when the prefix, length, alphabet or checksum
    /// is wrong — such a key is refused without touching the database.
    public static func parse(_ presented: String) -> ParsedAPIKey? {
        scheme.parse(presented)
    }

    /// SHA-256 of the key text, as stored at creation.
    public static func hash(_ key: String) -> [UInt8] {
        ChecksummedToken.hash(key)
    }
}

/// The operator token for `/admin/v1`: the same scheme as `APIKey` with the prefix `fy_admin_`,
/// so an API key can never pass for it.
public enum AdminToken {
    public static let prefix = "fy_admin_"
    private static let scheme = ChecksummedToken(prefix: prefix)

    public static func generate(using generator: inout some RandomNumberGenerator) -> String {
        scheme.generate(using: &generator)
    }

    public static func parse(_ presented: String) -> ParsedAdminToken? {
        scheme.parse(presented)
    }

    public static func hash(_ token: String) -> [UInt8] {
        ChecksummedToken.hash(token)
    }
}
