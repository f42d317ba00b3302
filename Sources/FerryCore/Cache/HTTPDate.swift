import Foundation

/// HTTP-date values (`Date`, `Expires`, `Last-Modified`, RFC 9110 §5.6.7).
public enum HTTPDate {
    /// IMF-fixdate, the obsolete RFC 850 form and asctime, as RFC 9110 §5.6.7 asks recipients
    /// to accept, plus the usual malformed variants. The RFC 6265 cookie-date algorithm reads
    /// all of them; `nil` for anything else (an invalid `Expires` such as "0" means "already
    /// expired" to the caller, RFC 9111 §5.3).
    public static func parse(_ text: String) -> Date? {
        CookieDate.parse(text)
    }
}
