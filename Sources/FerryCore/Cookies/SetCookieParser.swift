import Foundation

/// Turns one `Set-Cookie` field value into the cookie it asks for, or `nil` when a user agent
/// must ignore it: RFC 6265 §5.2 (parsing) and §5.3 steps 1–10 (what to store).
///
/// Beyond RFC 6265, from RFC 6265bis, because a production client needs them: control
/// characters are refused (the value is sent back in a `Cookie` header), a `Secure` cookie is
/// refused from a non-secure URL, and the `__Secure-` / `__Host-` name prefixes are enforced.
public enum SetCookieParser {
    /// RFC 6265 §6.1: at least 4096 bytes per cookie (name + value); more is refused.
    public static let maximumNameValueBytes = 4096
    /// RFC 6265bis §5.6: attribute values longer than this are ignored.
    public static let maximumAttributeValueBytes = 1024

    public static func parse(_ header: String, requestURL: CookieURL, now: Date) -> Cookie? {
        guard let parsed = ParsedSetCookie(header) else { return nil }

        // §5.3 step 3: Max-Age wins over Expires, whatever their order.
        let expiresAt = parsed.maxAge.map { expiry(maxAge: $0, now: now) } ?? parsed.expires

        // Steps 4–6: the domain, with the public-suffix check and the domain-match check.
        let host = requestURL.host
        var domain = parsed.domain ?? ""
        if !domain.isEmpty, CookieDomain.isPublicSuffix(domain) {
            guard domain == host else { return nil }
            domain = ""
        }
        let hostOnly: Bool
        if domain.isEmpty {
            hostOnly = true
            domain = host
        } else {
            guard CookieDomain.matches(host: host, domain: domain) else { return nil }
            // An IP address can only be matched exactly, so its cookies are host-only.
            hostOnly = CookieDomain.isIPAddress(host)
        }

        // Step 7: the path, else the default-path of the request.
        let path = parsed.path ?? CookiePath.defaultPath(for: requestURL.path)

        // RFC 6265bis §5.7: a non-secure origin cannot set a Secure cookie.
        if parsed.secure, !requestURL.isSecure { return nil }
        guard satisfiesNamePrefix(parsed.name, secure: parsed.secure, hostOnly: hostOnly, path: path) else { return nil }

        return Cookie(
            name: parsed.name, value: parsed.value, domain: domain, hostOnly: hostOnly, path: path,
            expiresAt: expiresAt, secure: parsed.secure, httpOnly: parsed.httpOnly,
            sameSite: parsed.sameSite, creationTime: now
        )
    }

    /// §5.2.2: a positive Max-Age counts from now; zero or less means "expired already".
    private static func expiry(maxAge: Int, now: Date) -> Date {
        guard maxAge > 0 else { return .distantPast }
        return min(now.addingTimeInterval(TimeInterval(maxAge)), .distantFuture)
    }

    /// RFC 6265bis §4.1.3: `__Secure-` needs Secure; `__Host-` also needs host-only and "/".
    private static func satisfiesNamePrefix(_ name: String, secure: Bool, hostOnly: Bool, path: String) -> Bool {
        let lowered = name.lowercased()
        if lowered.hasPrefix("__secure-") { return secure }
        if lowered.hasPrefix("__host-") { return secure && hostOnly && path == "/" }
        return true
    }
}

/// The name, value and attributes of one `Set-Cookie` value, per RFC 6265 §5.2: before the
/// storage model judges them against the request.
struct ParsedSetCookie {
    var name: String
    var value: String
    var expires: Date?
    var maxAge: Int?
    var domain: String?
    var path: String?
    var secure = false
    var httpOnly = false
    var sameSite: Cookie.SameSitePolicy?

    init?(_ header: String) {
        // §5.2 steps 1–5: the name-value-pair runs to the first ";".
        let parts = header.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        let pair = parts[0]
        guard let equals = pair.firstIndex(of: "=") else { return nil }
        name = String(pair[..<equals]).trimmingSpaces
        value = String(pair[pair.index(after: equals)...]).trimmingSpaces
        guard !name.isEmpty,
              name.utf8.count + value.utf8.count <= SetCookieParser.maximumNameValueBytes,
              !name.containsControlCharacters, !value.containsControlCharacters
        else { return nil }

        guard parts.count > 1 else { return }
        for attribute in parts[1].split(separator: ";", omittingEmptySubsequences: false) {
            apply(attribute)
        }
    }

    /// §5.2 attribute handling: names compare case-insensitively, the last of each wins,
    /// attributes that do not parse are ignored (not the cookie).
    private mutating func apply(_ attribute: Substring) {
        let attributeName: String
        let attributeValue: String
        if let equals = attribute.firstIndex(of: "=") {
            attributeName = String(attribute[..<equals]).trimmingSpaces
            attributeValue = String(attribute[attribute.index(after: equals)...]).trimmingSpaces
        } else {
            attributeName = String(attribute).trimmingSpaces
            attributeValue = ""
        }
        guard attributeValue.utf8.count <= SetCookieParser.maximumAttributeValueBytes else { return }

        switch attributeName.lowercased() {
        case "expires":
            if let date = CookieDate.parse(attributeValue) { expires = date }
        case "max-age":
            if let seconds = Self.deltaSeconds(attributeValue) { maxAge = seconds }
        case "domain":
            // §5.2.3: an empty value is ignored; one leading dot is dropped.
            guard !attributeValue.isEmpty else { return }
            let withoutDot = attributeValue.hasPrefix(".") ? String(attributeValue.dropFirst()) : attributeValue
            domain = withoutDot.lowercased()
        case "path":
            // §5.2.4: a value that does not start with "/" means the default-path.
            path = attributeValue.hasPrefix("/") ? attributeValue : nil
        case "secure":
            secure = true
        case "httponly":
            httpOnly = true
        case "samesite":
            sameSite = Cookie.SameSitePolicy(rawValue: attributeValue.lowercased())
        default:
            break
        }
    }

    /// §5.2.2: an optional "-" and digits only; anything else leaves the attribute ignored.
    /// Too many digits to represent means "very far away", not an error.
    private static func deltaSeconds(_ text: String) -> Int? {
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else { return nil }
        guard let magnitude = Int(digits) else { return negative ? Int.min : Int.max }
        return negative ? -magnitude : magnitude
    }
}
