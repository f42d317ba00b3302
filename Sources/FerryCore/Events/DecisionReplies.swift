/// What a receiver's reply to a decision event means, read defensively: anything unexpected is
/// URLSession's default for that decision (nil from every function here).
public enum DecisionReplies {
    /// `task.willPerformHTTPRedirection`: follow `proposed`, a changed request, or stop and take
    /// the redirect response as the task's response.
    public enum Redirect: Sendable, Equatable {
        case follow(TransferRequest)
        case stop
    }

    /// `{"request": {…}}` follows (fields absent keep the proposal's), `{"request": null}` stops.
    public static func redirect(_ reply: JSONValue?, proposed: TransferRequest, urlChecker: some URLSyntaxChecker) -> Redirect? {
        guard let reply, let members = reply.objectValue, let value = members["request"] else { return nil }
        if value == .null { return .stop }
        guard let reader = try? FieldReader(value) else { return nil }
        var request = proposed
        do {
            if let url = try reader.string("url", maxLength: 8192) {
                request.url = try urlChecker.check(url, field: "request.url").url
            }
            if let method = try reader.string("httpMethod", maxLength: 32, allowEmpty: false) {
                guard method.utf8.allSatisfy(HTTPHeaderRules.isTokenByte), !isForbiddenMethod(method) else { return nil }
                request.httpMethod = method
            }
            if let headers = try reader.stringMap("allHTTPHeaderFields") {
                try HTTPHeaderRules.validate(headers, field: "request.allHTTPHeaderFields")
                request.allHTTPHeaderFields = headers
            }
        } catch {
            return nil
        }
        return .follow(request)
    }

    /// As for task creation, a reply may not make Ferry send a forbidden method.
    static func isForbiddenMethod(_ method: String) -> Bool {
        HTTPHeaderRules.forbiddenMethods.contains(method.uppercased())
    }

    /// Why a well-formed reply to an event of `type` is still refused (then the default
    /// applies), for the delivery's record; nil when nothing in it is refused.
    public static func refusal(of reply: JSONValue, toEventOfType type: String) -> String? {
        switch EventType(rawValue: type) {
        case .taskWillPerformHTTPRedirection?, .taskWillBeginDelayedRequest?:
            guard let method = reply["request"]?["httpMethod"]?.stringValue, isForbiddenMethod(method) else { return nil }
            return "the reply's request.httpMethod \(method.prefix(32)) is never sent (\(HTTPHeaderRules.forbiddenMethods.sorted().joined(separator: ", ")) are refused)"
        case .taskDidReceiveChallenge?, .sessionDidReceiveChallenge?:
            guard let credential = reply["credential"], let key = credential["privateKey"]?.stringValue,
                  let problem = keyProblem(key, passphrase: credential["passphrase"]?.stringValue)
            else { return nil }
            return "the reply's credential.privateKey \(problem)"
        default:
            return nil
        }
    }

    private static func keyProblem(_ privateKey: String, passphrase: String?) -> String? {
        PrivateKeyProtection.problem(ofKey: privateKey, passphrase: passphrase, passphraseField: "credential.passphrase")
    }

    /// `URLSession.AuthChallengeDisposition`.
    public enum Challenge: Sendable, Equatable {
        case useCredential(user: String, password: String)
        /// `useCredential` with a client certificate (`NSURLAuthenticationMethodClientCertificate`):
        /// `{"credential": {"certificate": PEM, "privateKey": PEM, "passphrase"?}}`.
        case useClientCertificate(certificate: String, privateKey: String, passphrase: String?)
        case performDefaultHandling
        case cancelAuthenticationChallenge
        case rejectProtectionSpace
    }

    public static func challenge(_ reply: JSONValue?) -> Challenge? {
        guard let disposition = reply?["disposition"]?.stringValue else { return nil }
        switch disposition {
        case "useCredential":
            if let credential = reply?["credential"], let certificate = credential["certificate"]?.stringValue,
               let privateKey = credential["privateKey"]?.stringValue {
                guard certificate.contains("-----BEGIN"), privateKey.contains("-----BEGIN"),
                      certificate.utf8.count <= 65536, privateKey.utf8.count <= 65536 else { return nil }
                let passphrase = credential["passphrase"]?.stringValue
                if let passphrase, passphrase.utf8.contains(0) { return nil }
                // As for a session's key: an encrypted key without its passphrase crashed libcurl
                // (the whole process), and a costly one stalls the worker (see `refusal`).
                guard Self.keyProblem(privateKey, passphrase: passphrase) == nil else { return nil }
                return .useClientCertificate(certificate: certificate, privateKey: privateKey, passphrase: passphrase)
            }
            guard let credential = reply?["credential"], let user = credential["user"]?.stringValue,
                  let password = credential["password"]?.stringValue,
                  !(user + password).utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 })
            else { return nil }
            return .useCredential(user: user, password: password)
        case "performDefaultHandling": return .performDefaultHandling
        case "cancelAuthenticationChallenge": return .cancelAuthenticationChallenge
        case "rejectProtectionSpace": return .rejectProtectionSpace
        default: return nil
        }
    }

    /// `URLSession.ResponseDisposition`.
    public enum Response: String, Sendable, Equatable {
        case allow
        case cancel
        case becomeDownload
    }

    public static func response(_ reply: JSONValue?) -> Response? {
        reply?["disposition"]?.stringValue.flatMap(Response.init(rawValue:))
    }

    /// `dataTask.willCacheResponse`: `{"cachedResponse": null}` keeps the response out of the cache.
    public static func allowsCaching(_ reply: JSONValue?) -> Bool? {
        guard let value = reply?.objectValue?["cachedResponse"] else { return nil }
        return value != .null
    }

    /// `URLSession.DelayedRequestDisposition`.
    public enum DelayedRequest: Sendable, Equatable {
        case continueLoading
        case useNewRequest(TransferRequest)
        case cancel
    }

    public static func delayedRequest(_ reply: JSONValue?, original: TransferRequest, urlChecker: some URLSyntaxChecker) -> DelayedRequest? {
        switch reply?["disposition"]?.stringValue {
        case "continueLoading": return .continueLoading
        case "cancel": return .cancel
        case "useNewRequest":
            guard case .follow(let request)? = redirect(reply, proposed: original, urlChecker: urlChecker) else { return nil }
            return .useNewRequest(request)
        default: return nil
        }
    }
}
