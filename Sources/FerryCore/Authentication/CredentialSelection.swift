/// URLSession's default handling of an authentication challenge: the strongest challenge the
/// server offers for which the session stores a credential, preferring a credential for the
/// exact realm over one for any realm.
public enum CredentialSelection {
    public static func select(
        challenges: [AuthenticationChallenge], credentials: [StoredCredential], host: String, port: Int, scheme: String
    ) -> (challenge: AuthenticationChallenge, credential: StoredCredential)? {
        for challenge in challenges {  // strongest first
            let candidates = credentials.filter { $0.protectionSpace.answers(challenge, host: host, port: port, scheme: scheme) }
            if let exact = candidates.first(where: { $0.protectionSpace.realm != nil }) ?? candidates.first {
                return (challenge, exact)
            }
        }
        return nil
    }
}
