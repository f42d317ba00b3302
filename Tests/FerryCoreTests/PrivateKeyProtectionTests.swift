import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Client keys as tenants send them (`PrivateKeyFixtures`).
@Suite("Client private keys: encryption read before libcurl sees them")
struct PrivateKeyProtectionTests {
    @Test("what each form costs to decrypt")
    func derivations() throws {
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.plain).derivation == .none)
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.pbkdf2Default).derivation == .iterated(iterations: 2048))
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.pbkdf2Huge).derivation == .iterated(iterations: 10_000_000))
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.scrypt).derivation == .scrypt(n: 16384, r: 8, p: 1))
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.pkcs12Huge).derivation == .iterated(iterations: 5_000_000))
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.traditional).derivation == .traditional)
        // Windows line ends and a certificate in front change nothing.
        let crlf = "-----BEGIN CERTIFICATE-----\r\nMIIB\r\n-----END CERTIFICATE-----\r\n" + PrivateKeyFixtures.pbkdf2Huge.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try PrivateKeyProtection(pem: crlf).derivation == .iterated(iterations: 10_000_000))
    }

    @Test("costly derivations are refused, usual ones accepted")
    func costs() throws {
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.pbkdf2Default).excessiveCost == nil)
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.scrypt).excessiveCost == nil)
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.traditional).excessiveCost == nil)
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.pbkdf2Huge).excessiveCost?.contains("10000000") == true)
        #expect(try PrivateKeyProtection(pem: PrivateKeyFixtures.pkcs12Huge).excessiveCost != nil)
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
        configuration.tlsClientPrivateKeyPEM = PrivateKeyFixtures.pbkdf2Default
        #expect(configuration.clientKeyProblem?.field == "tlsClientPrivateKeyPEM")
        #expect(configuration.clientKeyProblem?.message.contains("tlsClientPrivateKeyPassphrase") == true)
        configuration.tlsClientPrivateKeyPassphrase = "secret"
        #expect(configuration.clientKeyProblem == nil)
        configuration.tlsClientPrivateKeyPEM = PrivateKeyFixtures.pbkdf2Huge
        #expect(configuration.clientKeyProblem?.field == "tlsClientPrivateKeyPEM")
        configuration.tlsClientPrivateKeyPEM = PrivateKeyFixtures.traditional
        configuration.tlsClientPrivateKeyPassphrase = nil
        #expect(configuration.clientKeyProblem != nil)
        configuration.tlsClientPrivateKeyPEM = PrivateKeyFixtures.plain
        #expect(configuration.clientKeyProblem == nil)
    }
}
