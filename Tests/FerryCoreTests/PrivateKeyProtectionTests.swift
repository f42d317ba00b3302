import FerryCore
import Foundation
import Testing

/// Client keys as tenants send them: fixtures made with OpenSSL 3 (`openssl pkcs8 -topk8 …`,
/// `openssl ec -aes256`) from one throwaway P-256 key.
@Suite("Client private keys: encryption read before libcurl sees them")
struct PrivateKeyProtectionTests {
    static let plain = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgoLmQs1TxRl73fNwg
YbxXhsy1PG3WyyznUTGbGWo3r3ehRANCAARsNVN/NdWSawsCBoqrxdUOtXyQZV5O
k63KqYJMrMa4foHdx5/IEdYZfuSnZiVDSqNlup9Y0bzy2Gd4+AyRcbOD
-----END PRIVATE KEY-----
"""
    /// PBES2, PBKDF2 with HMAC-SHA256, 2048 iterations (OpenSSL's default), AES-256-CBC.
    static let pbkdf2Default = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjB4QT1ZhaUWgICCAAw
DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEOQ9n4b2CApdQJUw3GW6O3QEgZBJ
h21Z5Psc+tDl3bIYFOk65HrT227elH8cEWpFhEbg6daTF3ssTLSkxrs9tzRJNhCV
cEusShU1Ez2aF370zLE+mBulmRRjd4VVUpdv9zyJYfbISxcX0Mei000xD8Da7pgH
LrHx5kWjsc/qkNuuUu/05DmxlOEtJvgPp+QIbBjM14r8VhdHr3TLuJ2Bkig/6wI=
-----END ENCRYPTED PRIVATE KEY-----
"""
    /// PBES2, PBKDF2, 10,000,000 iterations: seconds of a worker thread per connection.
    static let pbkdf2Huge = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHuMFkGCSqGSIb3DQEFDTBMMCsGCSqGSIb3DQEFDDAeBAgW1WR9BpXpAwIEAJiW
gDAMBggqhkiG9w0CCQUAMB0GCWCGSAFlAwQBKgQQ4Y4Utq42EaK9PZph92Lx3QSB
kMT8inl1iUQ7S7qqX+kEtU00STeQZ73eC3rzI3ueC0ZKw0d64CuxG2xANgIR9nX0
NU8D1sgFOOXsqTZOhRqgVFY9RwkWgtk+aqSlUpgyh6nbLjwVahEhwilJ27PixO2P
AKMkG0AjOE/1S7O0nbHih6XE0QTFFPshMWzILzJvkAIRsw8QWoM3VuA9SD6zu6k/
1g==
-----END ENCRYPTED PRIVATE KEY-----
"""
    /// PBES2 with scrypt N=16384, r=8, p=1.
    static let scrypt = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHkME8GCSqGSIb3DQEFDTBCMCEGCSsGAQQB2kcECzAUBAi9WiAptDrXmAICQAAC
AQgCAQEwHQYJYIZIAWUDBAEqBBAtwJMUKh7zBkVmiodgP9AnBIGQlbBrSBnVrK4c
c6Qj6fU5ShEYDZNZUBdLc9R2eG8OIIXR4FW4eXAFXD6H4BUqfagQAj32vy85io/q
vElpZehc/6oqhRO5OVDCzP9gW+dXPve+QKywC5lQxfjrhAOmveZYtPhJInMZA9Tr
72vAOLQ4TGqx7xDm/96NEFzYFEJI7knZe6hVa5H+J5NAByNykgb4
-----END ENCRYPTED PRIVATE KEY-----
"""
    /// PKCS #12 pbeWithSHA1And3-KeyTripleDES-CBC, 5,000,000 iterations.
    static let pkcs12Huge = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIGyMB0GCiqGSIb3DQEMAQMwDwQIjOFKDZ75HRsCA0xLQASBkJzepti9xbQxPsIz
x71qlJfKfv5KT0xPR4L59dy5tnrSOLU6Ip8weTpIibPIrneFUz3EUtnaT+E33xOJ
iz40+nh7PaQcK0WAdUl1JCyQMnKRh+fl623HVQEFl4mKyZK1A2Womf5mmHD4un9U
C9QQ7yUG++jPutG6MqYW9k8jX82hEQLgFgpeKZFIk5uliyfxbQ==
-----END ENCRYPTED PRIVATE KEY-----
"""
    /// The traditional OpenSSL form, `Proc-Type: 4,ENCRYPTED`.
    static let traditional = """
-----BEGIN EC PRIVATE KEY-----
Proc-Type: 4,ENCRYPTED
DEK-Info: AES-256-CBC,BA28214B05D3BAC9DEE6E50DBAF7BEFE

rdpBYMUgla+5gnIWLsxaQBfTlaNfJRaMrQjuFwf1F9JfFoELty9OAXw/I8eewGig
X85knPlDBzCsBz7mwTZk9crIb34Xne5yggvD1y7PUKj6hi2ezquuALL74p0UKLzl
FXRAN86aUfP+uJk/iEGp/Ah0R2GoyNdOToaEKBmg4kg=
-----END EC PRIVATE KEY-----
"""

    @Test("what each form costs to decrypt")
    func derivations() throws {
        #expect(try PrivateKeyProtection(pem: Self.plain).derivation == .none)
        #expect(try PrivateKeyProtection(pem: Self.pbkdf2Default).derivation == .iterated(iterations: 2048))
        #expect(try PrivateKeyProtection(pem: Self.pbkdf2Huge).derivation == .iterated(iterations: 10_000_000))
        #expect(try PrivateKeyProtection(pem: Self.scrypt).derivation == .scrypt(n: 16384, r: 8, p: 1))
        #expect(try PrivateKeyProtection(pem: Self.pkcs12Huge).derivation == .iterated(iterations: 5_000_000))
        #expect(try PrivateKeyProtection(pem: Self.traditional).derivation == .traditional)
        // Windows line ends and a certificate in front change nothing.
        let crlf = "-----BEGIN CERTIFICATE-----\r\nMIIB\r\n-----END CERTIFICATE-----\r\n" + Self.pbkdf2Huge.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try PrivateKeyProtection(pem: crlf).derivation == .iterated(iterations: 10_000_000))
    }

    @Test("costly derivations are refused, usual ones accepted")
    func costs() throws {
        #expect(try PrivateKeyProtection(pem: Self.pbkdf2Default).excessiveCost == nil)
        #expect(try PrivateKeyProtection(pem: Self.scrypt).excessiveCost == nil)
        #expect(try PrivateKeyProtection(pem: Self.traditional).excessiveCost == nil)
        #expect(try PrivateKeyProtection(pem: Self.pbkdf2Huge).excessiveCost?.contains("10000000") == true)
        #expect(try PrivateKeyProtection(pem: Self.pkcs12Huge).excessiveCost != nil)
    }

    @Test("hostile structures: unreadable or unsupported, never a crash")
    func hostile() {
        let block = { (base64: String) in "-----BEGIN ENCRYPTED PRIVATE KEY-----\n\(base64)\n-----END ENCRYPTED PRIVATE KEY-----\n" }
        #expect(throws: PrivateKeyProtection.Failure.unreadable) { try PrivateKeyProtection(pem: block("!!!!")) }
        #expect(throws: PrivateKeyProtection.Failure.unreadable) { try PrivateKeyProtection(pem: block("MIIB")) }
        // A length of 2^32 - 1 bytes in a 10-byte input.
        #expect(throws: PrivateKeyProtection.Failure.unreadable) { try PrivateKeyProtection(pem: block("MIT/////AAAA")) }
        // An AlgorithmIdentifier with an unknown OID (1.2.3).
        #expect(throws: PrivateKeyProtection.Failure.unsupportedScheme) { try PrivateKeyProtection(pem: block("MA0wCwYCKgMwBQQBAAIBAQ==")) }
        var generator = SplitMix64(seed: 8)
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let pem = block(Data(bytes).base64EncodedString())
            _ = try? PrivateKeyProtection(pem: pem)
        }
        // An iteration count of Int64.max is read without trapping, and refused.
        let wide = Data([0x30, 0x1C, 0x30, 0x1A, 0x06, 0x0A, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x0C, 0x01, 0x03,
                         0x30, 0x0C, 0x04, 0x00, 0x02, 0x08, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).base64EncodedString()
        #expect((try? PrivateKeyProtection(pem: block(wide)))?.excessiveCost != nil)
    }

    @Test("the session's key: encrypted without a passphrase, or too costly, is a problem naming the field")
    func configuration() {
        var configuration = SessionConfiguration(kind: .default)
        configuration.tlsClientPrivateKeyPEM = Self.pbkdf2Default
        #expect(configuration.clientKeyProblem?.field == "tlsClientPrivateKeyPEM")
        #expect(configuration.clientKeyProblem?.message.contains("tlsClientPrivateKeyPassphrase") == true)
        configuration.tlsClientPrivateKeyPassphrase = "secret"
        #expect(configuration.clientKeyProblem == nil)
        configuration.tlsClientPrivateKeyPEM = Self.pbkdf2Huge
        #expect(configuration.clientKeyProblem?.field == "tlsClientPrivateKeyPEM")
        configuration.tlsClientPrivateKeyPEM = Self.traditional
        configuration.tlsClientPrivateKeyPassphrase = nil
        #expect(configuration.clientKeyProblem != nil)
        configuration.tlsClientPrivateKeyPEM = Self.plain
        #expect(configuration.clientKeyProblem == nil)
    }
}
