import FerryCore
import Testing

@Suite("Authentication challenges and stored credentials")
struct AuthenticationTests {
    @Test("challenges are parsed from one or several headers, strongest first")
    func parsing() {
        let challenges = AuthenticationChallenge.parse([
            #"Basic realm="files", charset="UTF-8""#,
            #"Digest realm="vault", qop="auth", nonce="abc=", opaque="x", Negotiate"#,
            "NTLM",
            "Bearer realm=\"api\"",
        ])
        #expect(challenges == [
            .init(scheme: .negotiate, realm: nil), .init(scheme: .ntlm, realm: nil),
            .init(scheme: .digest, realm: "vault"), .init(scheme: .basic, realm: "files"),
        ])
        #expect(AuthenticationChallenge.parse(["NTLM TlRMTVNTUAACAAAADAAMADAAAAA="]) == [.init(scheme: .ntlm, realm: nil)])
        #expect(AuthenticationChallenge.parse(["garbage ,,, = \""]).isEmpty)
    }

    @Test("a credential answers its own host, port, protocol, realm and method")
    func selection() {
        func credential(_ id: String, realm: String?, method: ProtectionSpace.AuthenticationMethod, port: Int = 443) -> StoredCredential {
            StoredCredential(id: id, protectionSpace: .init(host: "Example.com", port: port, protocol: "https", realm: realm, authenticationMethod: method), user: id, password: "p")
        }
        let stored = [
            credential("any-realm", realm: nil, method: .default),
            credential("vault", realm: "vault", method: .httpDigest),
            credential("other-port", realm: nil, method: .default, port: 8443),
        ]
        let digest = CredentialSelection.select(
            challenges: [.init(scheme: .digest, realm: "vault")], credentials: stored, host: "example.com", port: 443, scheme: "https"
        )
        #expect(digest?.credential.id == "vault")
        let basic = CredentialSelection.select(
            challenges: [.init(scheme: .basic, realm: "files")], credentials: stored, host: "example.com", port: 443, scheme: "https"
        )
        #expect(basic?.credential.id == "any-realm")
        #expect(CredentialSelection.select(
            challenges: [.init(scheme: .ntlm, realm: nil)], credentials: stored, host: "example.com", port: 443, scheme: "https"
        ) == nil)
        #expect(CredentialSelection.select(
            challenges: [.init(scheme: .basic, realm: "files")], credentials: stored, host: "example.com", port: 443, scheme: "http"
        ) == nil)
    }
}
