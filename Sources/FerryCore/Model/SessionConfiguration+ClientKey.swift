extension SessionConfiguration {
    /// What makes the session's client key unusable, as (field, message); nil when libcurl may
    /// be handed it. The API refuses such a session at creation; the engine checks again
    /// before every transfer, for sessions stored before this check existed.
    public var clientKeyProblem: (field: String, message: String)? {
        guard let pem = tlsClientPrivateKeyPEM, pem != Self.redacted else { return nil }
        let problem = PrivateKeyProtection.problem(
            ofKey: pem, passphrase: tlsClientPrivateKeyPassphrase, passphraseField: "tlsClientPrivateKeyPassphrase"
        )
        return problem.map { ("tlsClientPrivateKeyPEM", $0) }
    }
}

extension PrivateKeyProtection {
    /// Why libcurl must not be handed this key with this passphrase, in words that follow the
    /// key's field name; nil when it may. For a session's key and for a delegate's reply alike.
    public static func problem(ofKey pem: String, passphrase: String?, passphraseField: String) -> String? {
        let protection: PrivateKeyProtection
        do {
            protection = try PrivateKeyProtection(pem: pem)
        } catch .unreadable {
            return "is labelled ENCRYPTED PRIVATE KEY but is not a readable PKCS #8 structure."
        } catch {
            return "is encrypted with a scheme Ferry does not accept; use PBES2 (PBKDF2 or scrypt), PBES1 or PKCS #12 encryption."
        }
        guard protection.isEncrypted else { return nil }
        // libcurl 7.88 crashes on an encrypted key without a passphrase (curl issue 16806).
        guard passphrase != nil else { return "is encrypted: \(passphraseField) is required with it." }
        return protection.excessiveCost
    }
}
