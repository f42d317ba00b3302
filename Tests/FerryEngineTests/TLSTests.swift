import FerryCore
@testable import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Testing

@Suite("TLS: trust, client certificates and URLSession's -120x errors")
struct TLSTests {
    static let certificates = Result { try TLSOrigin.makeCertificates() }

    private func fetch(_ url: String, configure: (inout SessionConfiguration) -> Void = { _ in }) async throws -> TaskRecord {
        try await EngineHarness.run { ferry in
            var configuration = SessionConfiguration(kind: .ephemeral)
            configure(&configuration)
            let session = try await ferry.makeSession(configuration)
            return try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: url).id)
        }
    }

    @Test("an unknown root is -1203; the session's own trusted root makes it a success")
    func trust() async throws {
        let certificates = try Self.certificates.get()
        let origin = try TLSOrigin(certificates)
        defer { origin.stop() }
        let untrusted = try await fetch(origin.url)
        #expect(untrusted.error?.code == -1203)
        let trusted = try await fetch(origin.url) { $0.tlsTrustedRootCertificatesPEM = certificates.caPEM }
        #expect(trusted.error == nil)
        #expect(trusted.response?.statusCode == 200)
    }

    @Test("an expired certificate is -1201")
    func expired() async throws {
        let certificates = try Self.certificates.get()
        let origin = try TLSOrigin(certificates, certificate: "expired")
        defer { origin.stop() }
        let task = try await fetch(origin.url) { $0.tlsTrustedRootCertificatesPEM = certificates.caPEM }
        #expect(task.error?.code == -1201)
    }

    @Test("a server that demands a client certificate: -1206 without one, success with the session's")
    func clientCertificate() async throws {
        let certificates = try Self.certificates.get()
        let origin = try TLSOrigin(certificates, requiresClientCertificate: true)
        defer { origin.stop() }
        let without = try await fetch(origin.url) { $0.tlsTrustedRootCertificatesPEM = certificates.caPEM }
        #expect(without.error?.code == -1206)
        let with = try await fetch(origin.url) {
            $0.tlsTrustedRootCertificatesPEM = certificates.caPEM
            $0.tlsClientCertificatePEM = certificates.clientCertificatePEM
            $0.tlsClientPrivateKeyPEM = certificates.clientKeyPEM
        }
        #expect(with.error == nil)
        #expect(with.response?.statusCode == 200)
    }

    @Test("an encrypted client key without a passphrase (stored before the API refused it) fails the task; libcurl never sees it")
    func encryptedKeyWithoutPassphrase() async throws {
        let certificates = try Self.certificates.get()
        let encrypted = try certificates.encryptedClientKey(passphrase: "secret", iterations: 2048)
        let origin = try TLSOrigin(certificates, requiresClientCertificate: true)
        defer { origin.stop() }
        // libcurl 7.88 dereferences the NULL passphrase here: the whole test process would die.
        let task = try await fetch(origin.url) {
            $0.tlsTrustedRootCertificatesPEM = certificates.caPEM
            $0.tlsClientCertificatePEM = certificates.clientCertificatePEM
            $0.tlsClientPrivateKeyPEM = encrypted
        }
        #expect(task.error?.code == -1200)
        #expect(task.error?.reason?.contains("tlsClientPrivateKeyPassphrase") == true)
    }

    @Test("an encrypted client key with its passphrase is used")
    func encryptedKeyWithPassphrase() async throws {
        let certificates = try Self.certificates.get()
        let encrypted = try certificates.encryptedClientKey(passphrase: "secret", iterations: 2048)
        let origin = try TLSOrigin(certificates, requiresClientCertificate: true)
        defer { origin.stop() }
        let task = try await fetch(origin.url) {
            $0.tlsTrustedRootCertificatesPEM = certificates.caPEM
            $0.tlsClientCertificatePEM = certificates.clientCertificatePEM
            $0.tlsClientPrivateKeyPEM = encrypted
            $0.tlsClientPrivateKeyPassphrase = "secret"
        }
        #expect(task.error == nil)
        #expect(task.response?.statusCode == 200)
    }

    @Test("a key with a huge PBKDF2 iteration count is refused before a worker spends seconds decrypting it")
    func costlyKey() async throws {
        let certificates = try Self.certificates.get()
        let costly = try certificates.encryptedClientKey(passphrase: "secret", iterations: 3_000_000)
        let origin = try TLSOrigin(certificates, requiresClientCertificate: true)
        defer { origin.stop() }
        let task = try await fetch(origin.url) {
            $0.tlsTrustedRootCertificatesPEM = certificates.caPEM
            $0.tlsClientCertificatePEM = certificates.clientCertificatePEM
            $0.tlsClientPrivateKeyPEM = costly
            $0.tlsClientPrivateKeyPassphrase = "secret"
        }
        // Before the fix the key was decrypted on the worker (and the transfer succeeded, late).
        #expect(task.error?.code == -1200)
        #expect(task.error?.reason?.contains("3000000") == true)
    }

    @Test("an encrypted key is decrypted before the worker (once per key), so libcurl gets it unencrypted")
    func decryptedBeforeTheWorker() async throws {
        let certificates = try Self.certificates.get()
        let encrypted = try certificates.encryptedClientKey(passphrase: "secret", iterations: 100_000)
        let keys = ClientKeys()
        defer { keys.shutdown() }
        var configuration = SessionConfiguration(kind: .default)
        configuration.tlsClientCertificatePEM = certificates.clientCertificatePEM
        configuration.tlsClientPrivateKeyPEM = encrypted
        configuration.tlsClientPrivateKeyPassphrase = "secret"
        let prepared = await keys.prepare(configuration)
        #expect(prepared.tlsClientPrivateKeyPassphrase == nil)
        let key = try #require(prepared.tlsClientPrivateKeyPEM)
        #expect(key.contains("-----BEGIN PRIVATE KEY-----"))
        #expect(try PrivateKeyProtection(pem: key).isEncrypted == false)
        // A wrong passphrase leaves the configuration as it was: libcurl reports it, as before.
        var wrong = configuration
        wrong.tlsClientPrivateKeyPassphrase = "not the passphrase"
        #expect(await keys.prepare(wrong) == wrong)
        // Nothing to decrypt: unchanged.
        var plain = configuration
        plain.tlsClientPrivateKeyPEM = certificates.clientKeyPEM
        #expect(await keys.prepare(plain) == plain)
        // Kept: with its thread stopped, the same key still comes back decrypted (the next task
        // of the session does not pay for the derivation again).
        keys.shutdown()
        #expect(await keys.prepare(configuration) == prepared)
    }
}
