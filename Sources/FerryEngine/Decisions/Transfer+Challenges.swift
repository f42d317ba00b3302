import Curl
import FerryCore
import Foundation

/// Authentication challenges as URLSession raises them: connection-level ones (NTLM,
/// Negotiate, a client certificate) go to `session.didReceiveChallenge` when the delegate hears
/// it, else to `task.didReceiveChallenge`; the others to `task.didReceiveChallenge`.
/// `rejectProtectionSpace` moves on to the next protection space and asks again.
extension Transfer {
    /// The event a challenge is raised as.
    func challengeEvent(isSessionLevel: Bool) -> EventType {
        isSessionLevel && job.decisions.contains(.sessionDidReceiveChallenge) ? .sessionDidReceiveChallenge : .taskDidReceiveChallenge
    }

    /// Asks about the first of `challenges` (strongest first). Returns whether the transfer now
    /// waits for the receiver.
    func askChallenge(_ challenges: [AuthenticationChallenge], previousFailureCount: Int) -> Bool {
        guard let first = challenges.first, let url = try? CurlURL(parsing: request.url) else { return false }
        let space = ProtectionSpace(
            host: url.host, port: url.effectivePort ?? 80, protocol: url.scheme,
            realm: first.realm, authenticationMethod: first.scheme.authenticationMethod
        )
        let data = challengeData(
            space: (try? JSONValue(encoding: space)) ?? .null, previousFailureCount: previousFailureCount, failureResponse: response
        )
        let isSessionLevel = first.scheme == .ntlm || first.scheme == .negotiate
        return ask(challengeEvent(isSessionLevel: isSessionLevel), data, pending: .challenge(challenges, previousFailureCount: previousFailureCount))
    }

    /// `rejectProtectionSpace`: the next protection space is asked about; after the last, the
    /// failure response is the task's.
    func rejectProtectionSpace(of challenges: [AuthenticationChallenge], previousFailureCount: Int) -> TransferEnd? {
        let rest = Array(challenges.dropFirst())
        guard !rest.isEmpty else { return .finished }
        return askChallenge(rest, previousFailureCount: previousFailureCount) ? nil : answerByDefault(rest)
    }

    /// The server asked for a client certificate the session has none of: URLSession asks with
    /// `NSURLAuthenticationMethodClientCertificate` (once per task). Returns nil when the transfer
    /// waits for the answer; otherwise it fails with `failure` (-1206).
    func clientCertificateRequested(_ failure: TransferError) -> TransferEnd? {
        guard failure.urlErrorCode == .clientCertificateRequired, !hasAskedForClientCertificate,
              job.claim.configuration.tlsClientCertificatePEM == nil,
              let url = try? CurlURL(parsing: request.url) else { return .failed(failure) }
        hasAskedForClientCertificate = true
        let space: JSONValue = [
            "host": .string(url.host), "port": .number(Double(url.effectivePort ?? 443)), "protocol": .string(url.scheme),
            "realm": .null, "authenticationMethod": "clientCertificate",
        ]
        let data = challengeData(space: space, previousFailureCount: 0, failureResponse: nil)
        return ask(challengeEvent(isSessionLevel: true), data, pending: .clientCertificate(failure)) ? nil : .failed(failure)
    }

    /// A `didReceiveChallenge` event's data: URLSessionAuthenticationChallenge's members.
    func challengeData(space: JSONValue, previousFailureCount: Int, failureResponse: HTTPResponseSnapshot?) -> [String: JSONValue] {
        [
            "challenge": [
                "protectionSpace": space,
                "previousFailureCount": .number(Double(previousFailureCount)),
                "failureResponse": failureResponse.flatMap { try? JSONValue(encoding: $0) } ?? .null,
            ],
        ]
    }

    /// A new exchange that presents the delegate's certificate.
    func retry(withClientCertificate certificate: DelegateClientCertificate) -> TransferEnd? {
        delegateClientCertificate = certificate
        return restartExchange()
    }
}

/// A client certificate and key a delegate answered a challenge with (PEM), used by this task only.
struct DelegateClientCertificate {
    var certificatePEM: String
    var privateKeyPEM: String
    var passphrase: String?
}

/// A 407 from the session's proxy, answering a plain HTTP request or the `CONNECT` of an HTTPS
/// tunnel: a task-level challenge whose protection space is the proxy's (`isProxy`,
/// `proxyType`); a credential answers it with `Proxy-Authorization` (CURLOPT_PROXYUSERPWD and
/// CURLOPT_PROXYAUTH, which curl sends with the request or the CONNECT). Without an answer, the
/// 407 is the task's response: session storage holds no proxy credentials.
extension Transfer {
    func proxyChallenged() -> TransferEnd? {
        let challenges = AuthenticationChallenge.parse(heads.completed?.values(of: "Proxy-Authenticate") ?? [])
        guard !challenges.isEmpty else { return .finished }
        return raiseProxyChallenge(challenges)
    }

    /// The proxy refused to open the tunnel with a 407. With no challenge Ferry can answer, the
    /// task fails as curl's error says (as before tunnels' challenges were delegated).
    func tunnelChallenged(_ head: ResponseHead, failure: TransferError) -> TransferEnd? {
        let challenges = AuthenticationChallenge.parse(head.values(of: "Proxy-Authenticate"))
        guard !challenges.isEmpty else { return .failed(failure) }
        // The 407 is the response should nobody answer, with no body (curl reads past a CONNECT
        // answer's): what a resumed download has on disk is not part of it. An answered challenge
        // then starts the download over, as after a plain proxy's 407.
        if exchangeStartBytes > 0 || resumeRequest != nil {
            do { try file?.truncateToZero() } catch {
                return .failed(TransferError(code: .cannotWriteToFile, failingURL: request.url))
            }
            bytesReceived = 0
            exchangeStartBytes = 0
            resumeRequest = nil
        }
        var snapshot = HTTPResponseSnapshot(url: request.url, head: head)
        snapshot.expectedContentLength = 0
        response = snapshot
        bytesExpectedToReceive = 0
        expectedTotalBytes = 0
        validator = nil
        return raiseProxyChallenge(challenges)
    }

    /// Asks about `challenges` as the next round; nil when the transfer waits for the answer.
    private func raiseProxyChallenge(_ challenges: [AuthenticationChallenge]) -> TransferEnd? {
        defer { proxyChallengeRounds += 1 }
        return askProxyChallenge(challenges, previousFailureCount: proxyChallengeRounds) ? nil : .finished
    }

    func askProxyChallenge(_ challenges: [AuthenticationChallenge], previousFailureCount: Int) -> Bool {
        let scheme = request.url.lowercased().hasPrefix("https:") ? "https" : "http"
        guard let first = challenges.first,
              let (proxy, _) = job.claim.configuration.connectionProxyDictionary?.proxy(forScheme: scheme) else { return false }
        let space: JSONValue = [
            "host": .string(proxy.host), "port": .number(Double(proxy.port)), "protocol": "http",
            "realm": first.realm.map(JSONValue.string) ?? .null,
            "authenticationMethod": .string(first.scheme.authenticationMethod.rawValue),
            "isProxy": true, "proxyType": scheme == "https" ? "HTTPS" : "HTTP",
        ]
        let data = challengeData(space: space, previousFailureCount: previousFailureCount, failureResponse: response)
        return ask(.taskDidReceiveChallenge, data, pending: .proxyChallenge(challenges, previousFailureCount: previousFailureCount))
    }

    /// A new exchange that answers the proxy's challenge with this credential.
    func retry(withProxyCredential credential: (user: String, password: String, scheme: AuthenticationChallenge.Scheme)) -> TransferEnd? {
        proxyChallengeResponse = credential
        return restartExchange()
    }
}
