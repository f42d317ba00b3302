import FerryCore
import FerryTestSupport
import Testing

@Suite("Receivers' decisions, read defensively")
struct DecisionReplyTests {
    let proposed = TransferRequest(url: "http://a/next", httpMethod: "GET", allHTTPHeaderFields: ["Accept": "*/*"])

    @Test("redirects: stop, follow as proposed, follow a changed request; anything odd is the default")
    func redirects() throws {
        #expect(DecisionReplies.redirect(try json(#"{"request": null}"#), proposed: proposed, urlChecker: TestURLChecker()) == .stop)
        #expect(DecisionReplies.redirect(try json(#"{"request": {}}"#), proposed: proposed, urlChecker: TestURLChecker()) == .follow(proposed))
        var changed = proposed
        changed.url = "https://b/elsewhere"
        changed.allHTTPHeaderFields = ["X-Hop": "2"]
        #expect(DecisionReplies.redirect(
            try json(#"{"request": {"url": "https://b/elsewhere", "allHTTPHeaderFields": {"X-Hop": "2"}}}"#),
            proposed: proposed, urlChecker: TestURLChecker()
        ) == .follow(changed))
        for odd in [#"{}"#, #"{"request": 3}"#, #"{"request": {"url": "ftp://x"}}"#, #"{"request": {"allHTTPHeaderFields": {"A": "b\nc"}}}"#] {
            #expect(DecisionReplies.redirect(try json(odd), proposed: proposed, urlChecker: TestURLChecker()) == nil)
        }
        #expect(DecisionReplies.redirect(nil, proposed: proposed, urlChecker: TestURLChecker()) == nil)
    }

    @Test("a reply may not make Ferry send CONNECT or TRACE: the default applies, and the refusal says why")
    func forbiddenMethods() throws {
        for method in ["CONNECT", "TRACE", "trace", "Track"] {
            let reply = try json(#"{"request": {"httpMethod": "\#(method)"}}"#)
            #expect(DecisionReplies.redirect(reply, proposed: proposed, urlChecker: TestURLChecker()) == nil)
            #expect(DecisionReplies.refusal(of: reply, toEventOfType: "task.willPerformHTTPRedirection")?.contains(method) == true)
            let delayed = try json(#"{"disposition": "useNewRequest", "request": {"httpMethod": "\#(method)"}}"#)
            #expect(DecisionReplies.delayedRequest(delayed, original: proposed, urlChecker: TestURLChecker()) == nil)
            #expect(DecisionReplies.refusal(of: delayed, toEventOfType: "task.willBeginDelayedRequest") != nil)
        }
        let put = try json(#"{"request": {"httpMethod": "PUT"}}"#)
        #expect(DecisionReplies.refusal(of: put, toEventOfType: "task.willPerformHTTPRedirection") == nil)
        #expect(DecisionReplies.redirect(put, proposed: proposed, urlChecker: TestURLChecker()) != nil)
    }

    @Test("challenges, responses, caching and delayed requests")
    func dispositions() throws {
        #expect(DecisionReplies.challenge(try json(#"{"disposition": "useCredential", "credential": {"user": "u", "password": "p"}}"#)) == .useCredential(user: "u", password: "p"))
        #expect(DecisionReplies.challenge(try json(#"{"disposition": "useCredential"}"#)) == nil)
        #expect(DecisionReplies.challenge(try json(#"{"disposition": "rejectProtectionSpace"}"#)) == .rejectProtectionSpace)
        #expect(DecisionReplies.challenge(try json(#"{"disposition": "maybe"}"#)) == nil)
        let pem = "-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"
        let key = "-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----"
        #expect(DecisionReplies.challenge(try json(#"{"disposition": "useCredential", "credential": {"certificate": "\#(pem)", "privateKey": "\#(key)", "passphrase": "s"}}"#))
            == .useClientCertificate(certificate: pem.replacingOccurrences(of: "\\n", with: "\n"), privateKey: key.replacingOccurrences(of: "\\n", with: "\n"), passphrase: "s"))
        #expect(DecisionReplies.challenge(try json(#"{"disposition": "useCredential", "credential": {"certificate": "not pem", "privateKey": "\#(key)"}}"#)) == nil)
        // An encrypted key needs its passphrase (without one, libcurl 7.88 crashed the process),
        // and a costly one is refused: the default applies, and the attempt says why.
        let encrypted = PrivateKeyFixtures.pbkdf2Default.replacingOccurrences(of: "\n", with: "\\n")
        let withoutPassphrase = try json(#"{"disposition": "useCredential", "credential": {"certificate": "\#(pem)", "privateKey": "\#(encrypted)"}}"#)
        #expect(DecisionReplies.challenge(withoutPassphrase) == nil)
        #expect(DecisionReplies.refusal(of: withoutPassphrase, toEventOfType: "task.didReceiveChallenge")
            == "the reply's credential.privateKey is encrypted: credential.passphrase is required with it.")
        let withPassphrase = try json(#"{"disposition": "useCredential", "credential": {"certificate": "\#(pem)", "privateKey": "\#(encrypted)", "passphrase": "s"}}"#)
        #expect(DecisionReplies.challenge(withPassphrase) != nil)
        #expect(DecisionReplies.refusal(of: withPassphrase, toEventOfType: "session.didReceiveChallenge") == nil)
        let costly = PrivateKeyFixtures.pbkdf2Huge.replacingOccurrences(of: "\n", with: "\\n")
        let costlyReply = try json(#"{"disposition": "useCredential", "credential": {"certificate": "\#(pem)", "privateKey": "\#(costly)", "passphrase": "s"}}"#)
        #expect(DecisionReplies.challenge(costlyReply) == nil)
        #expect(DecisionReplies.refusal(of: costlyReply, toEventOfType: "task.didReceiveChallenge") != nil)
        #expect(DecisionReplies.response(try json(#"{"disposition": "becomeDownload"}"#)) == .becomeDownload)
        #expect(DecisionReplies.response(try json(#"{"disposition": "becomeStream"}"#)) == nil)
        #expect(DecisionReplies.allowsCaching(try json(#"{"cachedResponse": null}"#)) == false)
        #expect(DecisionReplies.allowsCaching(try json(#"{}"#)) == nil)
        #expect(DecisionReplies.delayedRequest(try json(#"{"disposition": "cancel"}"#), original: proposed, urlChecker: TestURLChecker()) == .cancel)
        #expect(DecisionReplies.delayedRequest(try json(#"{"disposition": "useNewRequest", "request": {"url": "http://c/"}}"#), original: proposed, urlChecker: TestURLChecker())
            == .useNewRequest(TransferRequest(url: "http://c/", httpMethod: "GET", allHTTPHeaderFields: ["Accept": "*/*"])))
    }

    @Test("a reply Ferry cannot honour is rejected with a reason; one it can is not")
    func rejections() throws {
        func rejection(_ text: String, _ type: EventType) throws -> String? {
            DecisionReplies.rejection(of: try json(text), to: type, proposed: proposed, urlChecker: TestURLChecker())
        }
        let stream = try #require(try rejection(#"{"disposition": "becomeStream"}"#, .dataTaskDidReceiveResponse))
        #expect(stream.contains("becomeStream") && stream.contains("stream tasks"))
        let unknown = try #require(try rejection(#"{"disposition": "sometimes-secret"}"#, .dataTaskDidReceiveResponse))
        #expect(!unknown.contains("sometimes-secret"), "the reply is not quoted")
        #expect(try rejection(#"{}"#, .dataTaskDidReceiveResponse)?.contains("no \"disposition\"") == true)
        #expect(try rejection(#"{"disposition": "useCredential", "credential": {"user": "u"}}"#, .taskDidReceiveChallenge)?.contains("credential") == true)
        #expect(try rejection(#"{"disposition": "continueLoading"}"#, .taskWillBeginDelayedRequest) == nil)
        #expect(try rejection(#"{"request": {"url": "http://c/"}}"#, .taskWillBeginDelayedRequest) != nil, "useNewRequest must be named")
        #expect(try rejection(#"{"disposition": "useNewRequest", "request": {"url": "ftp://c/"}}"#, .taskWillBeginDelayedRequest) != nil)
        #expect(try rejection(#"{"cachedResponse": null}"#, .dataTaskWillCacheResponse) == nil)
        #expect(try rejection(#"{"cache": false}"#, .dataTaskWillCacheResponse) != nil)
        #expect(try rejection(#"{"request": null}"#, .taskWillPerformHTTPRedirection) == nil)
        #expect(try rejection(#"{"disposition": "allow"}"#, .taskWillPerformHTTPRedirection) != nil)
        for disposition in ["allow", "cancel", "becomeDownload"] {
            #expect(try rejection(#"{"disposition": "\#(disposition)"}"#, .dataTaskDidReceiveResponse) == nil)
        }
    }
}
