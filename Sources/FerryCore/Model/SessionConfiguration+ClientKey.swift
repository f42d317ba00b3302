extension SessionConfiguration {
    /// What makes the session's client key unusable, as (field, message); nil when libcurl may
    /// be handed it. The API refuses such a session at creation; the engine checks again
    /// before every transfer, for sessions stored before this check existed.
    public var clientKeyProblem: (field: String, message: String)? {
        guard let pem = tlsClientPrivateKeyPEM, pem != Self.redacted else { return nil }
        let protection: PrivateKeyProtection
        do {
            protection = try PrivateKeyProtection(pem: pem)
        } catch .unreadable {
            return ("tlsClientPrivateKeyPEM", "is labelled ENCRYPTED PRIVATE KEY but is not a readable PKCS #8 structure.")
        } catch {
            return ("tlsClientPrivateKeyPEM",
                    "is encrypted with a scheme Ferry does not accept; use PBES2 (PBKDF2 or scrypt), PBES1 or PKCS #12 encryption.")
        }
        guard protection.isEncrypted else { return nil }
        // libcurl 7.88 crashes on an encrypted key without a passphrase (curl issue 16806).
        guard tlsClientPrivateKeyPassphrase != nil else {
            return ("tlsClientPrivateKeyPEM", "is encrypted: tlsClientPrivateKeyPassphrase is required with it.")
        }
        if let excessive = protection.excessiveCost { return ("tlsClientPrivateKeyPEM", excessive) }
        return nil
    }
}
