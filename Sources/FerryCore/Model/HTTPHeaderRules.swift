/// What Ferry accepts as a request header from a tenant.
public enum HTTPHeaderRules {
    /// Headers the transfer engine manages itself; URLSession documents the same set as reserved.
    /// Letting a tenant set them would let a request lie about its own framing.
    public static let reserved: Set<String> = [
        "connection", "content-length", "host", "keep-alive", "proxy-authenticate",
        "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "www-authenticate",
    ]

    public static let maximumCount = 100

    /// Methods Ferry never sends, whoever asks (a task, a decision reply): CONNECT opens a
    /// tunnel through the origin, TRACE (and IIS's TRACK) echo the request, credentials
    /// included, back to whoever reads the response.
    public static let forbiddenMethods: Set<String> = ["CONNECT", "TRACE", "TRACK"]

    /// Validates one header; `field` is the path of its member for the error.
    public static func validate(name: String, value: String, field: String) throws {
        guard !name.isEmpty, name.utf8.count <= 256, name.utf8.allSatisfy(isTokenByte) else {
            throw ValidationError(field: field, message: "is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only).")
        }
        // RFC 9110 field values: visible characters, spaces and tabs (no CR, LF, NUL or other controls).
        guard !value.containsControlCharacters else {
            throw ValidationError(field: field, message: "must not contain control characters such as CR, LF or NUL.")
        }
        guard !reserved.contains(name.lowercased()) else {
            throw ValidationError(field: field, message: "is managed by Ferry and cannot be set.")
        }
    }

    public static func validate(_ headers: [String: String], field: String) throws {
        guard headers.count <= maximumCount else {
            throw ValidationError(field: field, message: "must have at most \(maximumCount) headers.")
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            try validate(name: name, value: value, field: "\(field).\(name)")
        }
    }

    /// RFC 9110 token characters.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// `base` overlaid with `overrides`, comparing names case-insensitively: the session's
    /// `httpAdditionalHeaders` lie under the request's own, as URLSession merges them.
    public static func merge(_ base: [String: String], under overrides: [String: String]) -> [String: String] {
        let overridden = Set(overrides.keys.map { $0.lowercased() })
        var merged = base.filter { !overridden.contains($0.key.lowercased()) }
        merged.merge(overrides) { _, request in request }
        return merged
    }
}
