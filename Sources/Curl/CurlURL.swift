import CCurl

/// A URL as libcurl parses it, so that what Ferry validates is exactly what curl will fetch.
public struct CurlURL: Sendable, Equatable {
    public let url: String
    public let scheme: String
    public let host: String
    public let port: Int?
    public let path: String
    public let query: String?
    public let hasCredentials: Bool
    /// The user name or password holds `%00`: curl refuses to send a NUL there (-1000 at transfer).
    public let credentialsHoldNUL: Bool

    /// Parses an absolute URL. Unknown schemes are accepted here; callers decide which they allow.
    public init(parsing text: String) throws {
        try self.init(text, base: nil)
    }

    /// Resolves `reference` (a redirect's `Location`, possibly relative) against `base`.
    public init(resolving reference: String, against base: String) throws {
        try self.init(reference, base: base)
    }

    private init(_ text: String, base: String?) throws {
        try CurlGlobal.ensureInitialised()
        guard let handle = curl_url() else {
            throw CurlError(source: .url, code: Int32(CURLUE_OUT_OF_MEMORY.rawValue), message: "curl_url failed")
        }
        defer { curl_url_cleanup(handle) }
        if let base {
            try CurlError.check(curl_url_set(handle, CURLUPART_URL, base, 0))
        }
        // CURLU_NON_SUPPORT_SCHEME: parse any scheme, so a ftp:// URL gets a clear "scheme not
        // allowed" from Ferry instead of a parse error.
        try CurlError.check(curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME)))
        url = try Self.part(handle, CURLUPART_URL) ?? text
        scheme = try Self.part(handle, CURLUPART_SCHEME)?.lowercased() ?? ""
        host = try Self.part(handle, CURLUPART_HOST) ?? ""
        port = try Self.part(handle, CURLUPART_PORT).flatMap { Int($0) }
        path = try Self.part(handle, CURLUPART_PATH) ?? "/"
        query = try Self.part(handle, CURLUPART_QUERY)
        let user = try Self.part(handle, CURLUPART_USER)
        hasCredentials = user != nil
        credentialsHoldNUL = try [user, Self.part(handle, CURLUPART_PASSWORD)].contains { $0?.contains("%00") ?? false }
    }

    private static func part(_ handle: OpaquePointer, _ part: CURLUPart) throws -> String? {
        var value: UnsafeMutablePointer<CChar>?
        let code = curl_url_get(handle, part, &value, 0)
        switch code {
        case CURLUE_OK:
            defer { curl_free(value) }
            return value.map { String(cString: $0) }
        case CURLUE_NO_SCHEME, CURLUE_NO_HOST, CURLUE_NO_PORT, CURLUE_NO_QUERY, CURLUE_NO_USER,
             CURLUE_NO_PASSWORD, CURLUE_NO_FRAGMENT, CURLUE_NO_OPTIONS, CURLUE_NO_ZONEID:
            return nil
        default:
            try CurlError.check(code)
            return nil
        }
    }
}
