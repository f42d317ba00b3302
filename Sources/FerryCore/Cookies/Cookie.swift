import Foundation

/// One stored cookie: the RFC 6265 §5.3 record a session's cookie storage keeps (`HTTPCookie`).
///
/// A session persists its cookies as JSON of this type, so every field is plain data and the
/// names stay stable.
public struct Cookie: Codable, Sendable, Equatable {
    /// RFC 6265bis `SameSite`. Ferry keeps it so a client reading the jar sees what the server
    /// asked for; a server-side client has no "site" to enforce it against.
    public enum SameSitePolicy: String, Codable, Sendable {
        case strict
        case lax
        /// Spelled out so that `sameSite == .none` cannot be mistaken for "no attribute".
        case noRestriction = "none"
    }

    public var name: String
    public var value: String
    /// Lower case, without a leading dot. For a host-only cookie, the exact host that set it.
    public var domain: String
    /// Sent only to `domain` itself, not to its subdomains (no `Domain` attribute was given).
    public var hostOnly: Bool
    public var path: String
    /// `nil` for a session cookie, which lives as long as the Ferry session that holds it.
    public var expiresAt: Date?
    /// Sent only over a secure scheme (https, wss).
    public var secure: Bool
    /// Kept for fidelity: Ferry only speaks HTTP, so every stored cookie is "HTTP" access.
    public var httpOnly: Bool
    public var sameSite: SameSitePolicy?
    public var creationTime: Date
    public var lastAccessTime: Date

    public init(
        name: String,
        value: String,
        domain: String,
        hostOnly: Bool,
        path: String,
        expiresAt: Date? = nil,
        secure: Bool = false,
        httpOnly: Bool = false,
        sameSite: SameSitePolicy? = nil,
        creationTime: Date,
        lastAccessTime: Date? = nil
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.expiresAt = expiresAt
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.creationTime = creationTime
        self.lastAccessTime = lastAccessTime ?? creationTime
    }

    /// A session cookie never expires by time.
    public var isSessionCookie: Bool { expiresAt == nil }

    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }

    /// Two cookies with the same identity replace each other (RFC 6265 §5.3 step 11).
    func hasSameIdentity(as other: Cookie) -> Bool {
        name == other.name && domain == other.domain && path == other.path
    }
}
