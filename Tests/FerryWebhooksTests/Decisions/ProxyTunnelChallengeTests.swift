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

    /// A session whose HTTPS requests go through `proxy`, trusting the test CA, with `receiver` as
    /// its delegate (nil: no delegate).
    private func session(
        _ ferry: EngineHarness, proxy: TunnelProxy, receiver: ChallengeDecisionTests.Receiver?, ca: String
    ) async throws -> SessionRecord {
        var configuration = SessionConfiguration(kind: .default)
        configuration.connectionProxyDictionary = ProxyConfiguration(https: ProxyEndpoint(host: "127.0.0.1", port: proxy.port))
        configuration.tlsTrustedRootCertificatesPEM = ca
        return try await ferry.database.database.sessions.create(
            tenantID: ferry.tenant.id, SessionCreation(configuration: configuration, delegate: receiver.map { DelegateSpec(url: $0.url) })
        ).session
    }

    @Test("useCredential opens the tunnel with Proxy-Authorization and the download completes through it")
    func credentialOpensTheTunnel() async throws {
        let certificates = try ChallengeDecisionTests.certificates.get()
        let origin = try TLSOrigin(certificates)
        let proxy = try TunnelProxy(realm: "gate", user: "ada", password: "lovelace")
        let receiver = try ChallengeDecisionTests.Receiver { _, _ in Self.credential }
        defer { origin.stop(); proxy.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: ChallengeDecisionTests.webhooks) { ferry in
            let session = try await session(ferry, proxy: proxy, receiver: receiver, ca: certificates.caPEM)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .download, url: origin.url).id, timeout: .seconds(30))
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200)
            #expect(String(decoding: try ferry.downloadedFile(of: task.id), as: UTF8.self).contains("<HTML>"), "the origin's page, through the tunnel")
            #expect(proxy.connectAuthorizations == [nil, "Basic " + Data("ada:lovelace".utf8).base64EncodedString()])
            #expect(proxy.tunnelsOpened == ["127.0.0.1:\(origin.port)"])

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
        let certificates = try ChallengeDecisionTests.certificates.get()
        let origin = try TLSOrigin(certificates)
        let proxy = try TunnelProxy(realm: "gate", user: "ada", password: "lovelace")
        let receiver = try ChallengeDecisionTests.Receiver { _, _ in Self.credential }
        defer { origin.stop(); proxy.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: ChallengeDecisionTests.webhooks) { ferry in
            let session = try await session(ferry, proxy: proxy, receiver: receiver, ca: certificates.caPEM)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url).id, timeout: .seconds(30))
            #expect(task.error == nil)
            #expect(task.response?.mimeType == "text/html")
            // The proxy's "200 Connection established" carries no Content-Type.
            let asked = try await ferry.eventData(of: task.id, type: "dataTask.didReceiveResponse")
            #expect(asked.count == 1)
            #expect(asked.first?["response"]?["mimeType"] == "text/html")
        }
    }

    @Test("cancelAuthenticationChallenge cancels the task (-999)")
    func cancelEndsTheTask() async throws {
        let certificates = try ChallengeDecisionTests.certificates.get()
        let origin = try TLSOrigin(certificates)
        let proxy = try TunnelProxy(realm: "gate", user: "ada", password: "lovelace")
        let receiver = try ChallengeDecisionTests.Receiver { _, _ in #"{"disposition": "cancelAuthenticationChallenge"}"# }
        defer { origin.stop(); proxy.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: ChallengeDecisionTests.webhooks) { ferry in
            let session = try await session(ferry, proxy: proxy, receiver: receiver, ca: certificates.caPEM)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url).id, timeout: .seconds(30))
            #expect(task.state == .completed)
            #expect(task.error?.code == -999)
            #expect(receiver.challengeEvents.count == 1)
            #expect(proxy.tunnelsOpened.isEmpty)
        }
    }

    @Test("without a delegate the default handling applies: no proxy credential is stored, so the 407 is the response")
    func defaultHandlingWithoutDelegate() async throws {
        let certificates = try ChallengeDecisionTests.certificates.get()
        let origin = try TLSOrigin(certificates)
        let proxy = try TunnelProxy(realm: "gate", user: "ada", password: "lovelace")
        defer { origin.stop(); proxy.stop() }
        try await EngineHarness.run(webhooks: ChallengeDecisionTests.webhooks) { ferry in
            let session = try await session(ferry, proxy: proxy, receiver: nil, ca: certificates.caPEM)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url).id, timeout: .seconds(30))
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 407)
            #expect(proxy.connectAuthorizations == [nil])
        }
    }
}
