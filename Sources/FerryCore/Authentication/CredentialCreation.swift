/// A validated `PUT /v1/sessions/{id}/credentials` body: `setCredential(_:for:)`.
public struct CredentialCreation: Sendable, Equatable {
    public var protectionSpace: ProtectionSpace
    public var user: String
    public var password: String

    public init(validating value: JSONValue) throws {
        let reader = try FieldReader(value)
        guard let space = try reader.object("protectionSpace") else {
            throw reader.error("protectionSpace", "is required: {host, port?, protocol?, realm?, authenticationMethod?}.")
        }
        let host = try space.requiredString("host", maxLength: 253)
        guard host.utf8.allSatisfy({ HTTPHeaderRules.isTokenByte($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) else {
            throw space.error("host", "must be a host name or address.")
        }
        let scheme = try space.string("protocol", maxLength: 8) ?? "https"
        guard scheme == "http" || scheme == "https" else { throw space.error("protocol", "must be \"http\" or \"https\".") }
        let port = try space.integer("port", in: 1...65535) ?? (scheme == "https" ? 443 : 80)
        let realm = try space.string("realm", maxLength: 256)
        let method = try space.choice("authenticationMethod", as: ProtectionSpace.AuthenticationMethod.self) ?? .default
        try space.finish()
        protectionSpace = ProtectionSpace(host: host, port: port, protocol: scheme, realm: realm, authenticationMethod: method)
        user = try reader.requiredString("user", maxLength: 256)
        guard let password = try reader.string("password", maxLength: 1024) else { throw reader.error("password", "is required.") }
        self.password = password
        for (field, value) in [("user", user), ("password", password)] where value.utf8.contains(where: { $0 == 10 || $0 == 13 }) {
            throw reader.error(field, "must not contain CR or LF.")
        }
        try reader.finish()
    }
}
