/// Opaque resource ids with a type prefix (`tsk_…`, `ses_…`, `evt_…`, `ten_…`, `blb_…`).
///
/// 24 base62 symbols carry ≈143 random bits: ids can be shown to tenants and used in URLs
/// without being guessable or revealing how many objects exist.
public enum ResourceID {
    public static let randomLength = 24

    /// `prefix` + `_` + 24 random base62 symbols, e.g. `tsk_4fQ…`.
    public static func make(prefix: String, using generator: inout some RandomNumberGenerator) -> String {
        prefix + "_" + Base62.randomString(length: randomLength, using: &generator)
    }
}
