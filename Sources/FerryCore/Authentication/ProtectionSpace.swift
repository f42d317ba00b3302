/// `URLProtectionSpace`: where a credential applies.
public struct ProtectionSpace: Codable, Sendable, Equatable, Hashable {
    /// `NSURLAuthenticationMethod…`, by short names.
    public enum AuthenticationMethod: String, Codable, Sendable, CaseIterable {
        /// `NSURLAuthenticationMethodDefault`: Basic or Digest, whichever the server asks for.
        case `default`
        case httpBasic
        case httpDigest
        case ntlm
        case negotiate
    }

    public var host: String
    public var port: Int
    /// `http` or `https`.
    public var `protocol`: String
    /// nil: any realm of the host.
    public var realm: String?
    public var authenticationMethod: AuthenticationMethod

    public init(host: String, port: Int, protocol: String, realm: String?, authenticationMethod: AuthenticationMethod) {
        self.host = host.lowercased()
        self.port = port
        self.protocol = `protocol`.lowercased()
        self.realm = realm
        self.authenticationMethod = authenticationMethod
    }

    /// Whether a credential stored for this space answers `challenge` from `host:port` over `scheme`.
    public func answers(_ challenge: AuthenticationChallenge, host: String, port: Int, scheme: String) -> Bool {
        guard self.host == host.lowercased(), self.port == port, self.protocol == scheme.lowercased() else { return false }
        if let realm, realm != challenge.realm { return false }
        switch authenticationMethod {
        case .default: return challenge.scheme == .basic || challenge.scheme == .digest
        case .httpBasic: return challenge.scheme == .basic
        case .httpDigest: return challenge.scheme == .digest
        case .ntlm: return challenge.scheme == .ntlm
        case .negotiate: return challenge.scheme == .negotiate
        }
    }
}

/// A user and password for a protection space (`URLCredential` with `.forSession` or `.permanent`
/// persistence: Ferry keeps them with the session until it is reset or removed).
public struct StoredCredential: Codable, Sendable, Equatable {
    public var id: String
    public var protectionSpace: ProtectionSpace
    public var user: String
    public var password: String

    public init(id: String, protectionSpace: ProtectionSpace, user: String, password: String) {
        self.id = id
        self.protectionSpace = protectionSpace
        self.user = user
        self.password = password
    }
}
