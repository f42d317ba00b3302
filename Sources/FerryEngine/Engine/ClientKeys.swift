import COpenSSL
import FerryCore
import Foundation
import Synchronization

/// Decrypts sessions' encrypted client keys before their transfers reach a worker, on a thread
/// of its own, so that libcurl is only ever handed unencrypted keys. Otherwise libcurl decrypts
/// the key on the worker thread at every new connection: a costly key derivation stalls every
/// transfer of that worker and the heartbeat that waits for its snapshot (and libcurl 7.88
/// crashes when the passphrase is missing). What each key came to is kept in memory, a few, so
/// the tasks of one session pay for the derivation once: the tasks of a claim that ask at the
/// same moment wait for one derivation, and a key that does not decrypt is not tried again.
final class ClientKeys: Sendable {
    private struct Entry: Hashable {
        var pem: String
        var passphrase: String
    }

    /// One thread: derivations are bounded (`PrivateKeyProtection`) and rare once kept.
    private let pool = BlockingPool(name: "ferry-keys", threadCount: 1)
    /// The unencrypted key each entry came to; nil when there is nothing to decrypt, or it
    /// does not decrypt.
    private let decrypted = Mutex<[Entry: Task<String?, Never>]>([:])
    static let maximumKept = 64

    enum Failure: Error {
        case undecryptable
    }

    /// `configuration` with its client key decrypted and no passphrase, ready for libcurl. Left
    /// as it is when there is nothing to decrypt, when the key is refused anyway (the worker
    /// fails the task), or when it does not decrypt (libcurl then reports the bad key or
    /// passphrase as it always did, at the TLS handshake, within the bounded cost).
    func prepare(_ configuration: SessionConfiguration) async -> SessionConfiguration {
        guard let pem = configuration.tlsClientPrivateKeyPEM, let passphrase = configuration.tlsClientPrivateKeyPassphrase
        else { return configuration }
        let entry = Entry(pem: pem, passphrase: passphrase)
        let derivation = decrypted.withLock { kept in
            if let known = kept[entry] { return known }
            if kept.count >= Self.maximumKept { kept.removeAll() }
            let derivation = Task { [pool] () -> String? in
                // Read once per key, not for every task: both depend on the PEM alone.
                guard configuration.clientKeyProblem == nil, (try? PrivateKeyProtection(pem: pem))?.isEncrypted == true else { return nil }
                return try? await pool.run { try Self.decrypt(pem, passphrase: passphrase) }
            }
            kept[entry] = derivation
            return derivation
        }
        guard let key = await derivation.value else { return configuration }
        var prepared = configuration
        prepared.tlsClientPrivateKeyPEM = key
        prepared.tlsClientPrivateKeyPassphrase = nil
        return prepared
    }

    /// The key as unencrypted PKCS #8 PEM. Blocks for the key derivation: never on a worker,
    /// the cooperative pool or an event loop.
    static func decrypt(_ pem: String, passphrase: String) throws(Failure) -> String {
        let bytes = Array(pem.utf8)
        guard bytes.count < Int(Int32.max) else { throw .undecryptable }
        var length = 0
        let key = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { text in
                ferry_openssl_decrypt_private_key(text.baseAddress, Int32(text.count), passphrase, &length)
            }
        }
        guard let key else { throw .undecryptable }
        defer { ferry_openssl_free_key(key, length) }
        return String(cString: key)
    }

    func shutdown() {
        pool.shutdown()
    }
}
