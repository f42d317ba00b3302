import Foundation

extension TransferRequest {
    /// The request as someone other than its tenant may see it (the operator's support view):
    /// the values of its credential fields (`RedirectPolicy.credentialFields`) and its URL's
    /// password replaced, as `SessionConfiguration.redactingSecrets` does for a session's key.
    public var redactingCredentials: TransferRequest {
        var shown = self
        for name in shown.allHTTPHeaderFields.keys where RedirectPolicy.credentialFields.contains(name.lowercased()) {
            shown.allHTTPHeaderFields[name] = SessionConfiguration.redacted
        }
        shown.url = Self.redactingPassword(in: url)
        return shown
    }

    /// `url` with its password, if it has one, replaced by "redacted" (brackets would be
    /// percent-encoded in a URL).
    public static func redactingPassword(in url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.percentEncodedPassword = "redacted"
        return components.string ?? url
    }
}
