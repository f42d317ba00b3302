/// Host and domain rules of RFC 6265 §5.1.2 and §5.1.3.
///
/// Ferry has no Public Suffix List (it would have to be downloaded and kept current), so
/// `isPublicSuffix` recognises only what needs no list: a single label such as `com` or
/// `localhost`. A `Domain=co.uk` cookie is therefore accepted by Ferry where a browser would
/// refuse it. The harm is bounded: the cookie stays inside the one session that received it.
public enum CookieDomain {
    /// RFC 6265 §5.1.2 canonicalisation, without IDNA: lower case, brackets of an IPv6
    /// literal removed. Hosts reach Ferry from URLs that curl accepts, which are ASCII
    /// (punycode) in practice; a non-ASCII host is only lowercased.
    public static func canonicalHost(_ host: String) -> String {
        var text = Substring(host)
        if text.hasPrefix("["), text.hasSuffix("]") {
            text = text.dropFirst().dropLast()
        }
        return text.lowercased()
    }

    /// Whether `host` is an IP literal rather than a name. IPv6 contains ":"; a dotted host
    /// whose last label is numeric is IPv4 the way URL parsers read it (`010.1`, `0x7f.1`),
    /// so those are all treated as addresses and never get domain cookies.
    public static func isIPAddress(_ host: String) -> Bool {
        let canonical = canonicalHost(host)
        if canonical.contains(":") { return true }
        var labels = canonical.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
        guard let last = labels.last, !last.isEmpty else { return false }
        if last.allSatisfy(\.isASCIIDigit) { return true }
        let lowered = last.lowercased()
        return lowered.hasPrefix("0x") && lowered.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    /// RFC 6265 §5.1.3: `host` domain-matches `domain` when they are identical, or when `host`
    /// is a name (not an IP address) that ends with "." followed by `domain`. Both are compared
    /// in canonical form; trailing dots are significant, as in the RFC's string comparison.
    public static func matches(host: String, domain: String) -> Bool {
        let host = canonicalHost(host)
        let domain = canonicalHost(domain)
        if host.utf8.elementsEqual(domain.utf8) { return true }
        guard !domain.isEmpty, !isIPAddress(host) else { return false }
        return host.utf8.reversed().starts(with: ("." + domain).utf8.reversed())
    }

    /// A domain that a cookie must not be scoped to because it is shared by unrelated owners.
    /// Without a Public Suffix List only single labels (`com`, `local`, `localhost`) are
    /// detected; see the type's documentation.
    public static func isPublicSuffix(_ domain: String) -> Bool {
        let canonical = canonicalHost(domain)
        let labels = canonical.split(separator: ".", omittingEmptySubsequences: true)
        return labels.count <= 1
    }
}

extension Character {
    var isASCIIDigit: Bool {
        guard let ascii = asciiValue else { return false }
        return ascii >= 48 && ascii <= 57
    }
}
