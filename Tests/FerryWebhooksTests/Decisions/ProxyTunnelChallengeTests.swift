import FerryCore
import FerryStore
import FerryTestSupport
import FerryWebhooks
import Foundation
import Testing
import TestOrigin

/// HTTPS through the session's proxy goes through a CONNECT tunnel; a 407 answering the CONNECT
/// is the same task-level challenge as a plain proxy's 407, with the proxy's protection space.
@Suite("A 407 answering an HTTPS tunnel's CONNECT is a proxy challenge")
struct ProxyTunnelChallengeTests {
    static let credential = #"{"disposition": "useCredential", "credential": {"user": "ada", "password": "lovelace"}}"#

    private struct Tunnel {
        var ferry: EngineHarness
        var task: TaskRecord
        var proxy: TunnelProxy
        var receiver: ChallengeDecisionTests.Receiver?
        var originPort: Int
    }

    /// Runs one task of `kind` to the TLS origin through a tunnelling proxy that wants `ada`'s
    /// Basic credential, in a session trusting the test CA whose delegate answers every challenge
    /// with `reply` (nil: no delegate); `check` sees the ended task and the parts of the run.
    private func throughTunnel(kind: TaskKind, reply: String?, _ check: (Tunnel) async throws -> Void) async throws {
        let certificates = try ChallengeDecisionTests.certificates.get()
        let origin = try TLSOrigin(certificates)
        let proxy = try TunnelProxy(realm: "gate", user: "ada", password: "lovelace")
        let receiver = try reply.map { reply in try ChallengeDecisionTests.Receiver { _, _ in reply } }
        defer { origin.stop(); proxy.stop(); receiver?.origin.stop() }
        try await EngineHarness.run(webhooks: ChallengeDecisionTests.webhooks) { ferry in
            var configuration = SessionConfiguration(kind: .default)
            configuration.connectionProxyDictionary = ProxyConfiguration(https: ProxyEndpoint(host: "127.0.0.1", port: proxy.port))
            configuration.tlsTrustedRootCertificatesPEM = certificates.caPEM
            let session = try await ferry.database.database.sessions.create(
                tenantID: ferry.tenant.id, SessionCreation(configuration: configuration, delegate: receiver.map { DelegateSpec(url: $0.url) })
            ).session
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: kind, url: origin.url).id, timeout: .seconds(30))
            try await check(Tunnel(ferry: ferry, task: task, proxy: proxy, receiver: receiver, originPort: origin.port))
        }
    }

    @Test("useCredential opens the tunnel with Proxy-Authorization and the download completes through it")
    func credentialOpensTheTunnel() async throws {
        try await throughTunnel(kind: .download, reply: Self.credential) { run in
            let (task, proxy) = (run.task, run.proxy)
            let receiver = try #require(run.receiver)
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200)
            #expect(String(decoding: try run.ferry.downloadedFile(of: task.id), as: UTF8.self).contains("<HTML>"), "the origin's page, through the tunnel")
            #expect(proxy.connectAuthorizations == [nil, "Basic " + Data("ada:lovelace".utf8).base64EncodedString()])
            #expect(proxy.tunnelsOpened == ["127.0.0.1:\(run.originPort)"])

            let asked = try #require(receiver.challengeEvents.first)
            #expect(receiver.challengeEvents.count == 1)
            #expect(asked["type"] == "task.didReceiveChallenge")
            let challenge = asked["data"]?["challenge"]
            #expect(challenge?["previousFailureCount"] == .number(0))
            #expect(challenge?["failureResponse"]?["statusCode"] == .number(407))
            let space = challenge?["protectionSpace"]
            #expect(space?["isProxy"] == true)
            #expect(space?["proxyType"] == "HTTPS")
            #expect(space?["host"] == "127.0.0.1")
            #expect(space?["port"] == .number(Double(proxy.port)))
            #expect(space?["realm"] == "gate")
            #expect(space?["authenticationMethod"] == "httpBasic")
        }
    }

    @Test("through the tunnel, the origin's response is the one asked about, not the proxy's answer to CONNECT")
    func tunnelAnswerIsNotTheResponse() async throws {
        try await throughTunnel(kind: .data, reply: Self.credential) { run in
            #expect(run.task.error == nil)
            #expect(run.task.response?.mimeType == "text/html")
            // The proxy's "200 Connection established" carries no Content-Type.
            let asked = try await run.ferry.eventData(of: run.task.id, type: "dataTask.didReceiveResponse")
            #expect(asked.count == 1)
            #expect(asked.first?["response"]?["mimeType"] == "text/html")
        }
    }

    @Test("cancelAuthenticationChallenge cancels the task (-999)")
    func cancelEndsTheTask() async throws {
        try await throughTunnel(kind: .data, reply: #"{"disposition": "cancelAuthenticationChallenge"}"#) { run in
            #expect(run.task.state == .completed)
            #expect(run.task.error?.code == -999)
            #expect(run.receiver?.challengeEvents.count == 1)
            #expect(run.proxy.tunnelsOpened.isEmpty)
        }
    }

    @Test("without a delegate the default handling applies: no proxy credential is stored, so the 407 is the response")
    func defaultHandlingWithoutDelegate() async throws {
        try await throughTunnel(kind: .data, reply: nil) { run in
            #expect(run.task.error == nil)
            #expect(run.task.response?.statusCode == 407)
            #expect(run.proxy.connectAuthorizations == [nil])
        }
    }
}
