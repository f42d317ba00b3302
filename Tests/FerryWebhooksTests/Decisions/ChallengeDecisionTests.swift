import FerryCore
import FerryStore
import FerryTestSupport
import FerryWebhooks
import Foundation
import Synchronization
import Testing
import TestOrigin

/// Authentication challenges raised as URLSession raises them: a client certificate request
/// is a challenge, connection-level challenges fall back to the task level, and
/// `rejectProtectionSpace` asks about the next protection space.
@Suite("Authentication challenges: client certificates, session and task level, rejected spaces")
struct ChallengeDecisionTests {
    static let certificates = Result { try TLSOrigin.makeCertificates() }

    /// Answers each challenge event with `answer(type, how many challenges came before)`;
    /// every other event with `{}`.
    final class Receiver: Sendable {
        final class Log: Sendable {
            let events = Mutex<[JSONValue]>([])
        }

        let origin: TestOrigin
        private let log = Log()

        init(answer: @escaping @Sendable (_ type: String, _ earlier: Int) -> String) throws {
            let log = self.log
            origin = try TestOrigin { request, responder in
                let event = (try? JSONValue.parse(request.body)) ?? .null
                let type = event["type"]?.stringValue ?? ""
                var reply = "{}"
                if type.hasSuffix("didReceiveChallenge") {
                    let earlier = log.events.withLock { list in
                        list.append(event)
                        return list.count - 1
                    }
                    reply = answer(type, earlier)
                }
                try responder.respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(reply.utf8))
            }
        }

        var url: String { origin.url("/hook") }
        /// The challenge events received, in order.
        var challengeEvents: [JSONValue] { log.events.withLock { $0 } }
    }

    static let webhooks = WebhookConfiguration(
        instanceID: "test-instance",
        addressPolicy: AddressPolicy(allowedNetworks: [try! CIDRBlock("127.0.0.0/8")])
    )

    private func session(_ ferry: EngineHarness, receiver: Receiver, events: Set<EventType>?, trusting ca: String? = nil) async throws -> SessionRecord {
        var configuration = SessionConfiguration(kind: .default)
        configuration.tlsTrustedRootCertificatesPEM = ca
        return try await ferry.database.database.sessions.create(
            tenantID: ferry.tenant.id, SessionCreation(configuration: configuration, delegate: DelegateSpec(url: receiver.url, events: events))
        ).session
    }

    private static func certificateReply(_ certificates: TLSOrigin.Certificates) -> String {
        let credential: JSONValue = [
            "disposition": "useCredential",
            "credential": ["certificate": .string(certificates.clientCertificatePEM), "privateKey": .string(certificates.clientKeyPEM)],
        ]
        return String(decoding: credential.serialized(), as: UTF8.self)
    }

    @Test("a server asking for a client certificate is a session-level challenge, answered with a certificate and key")
    func clientCertificateAtSessionLevel() async throws {
        let certificates = try Self.certificates.get()
        let origin = try TLSOrigin(certificates, requiresClientCertificate: true)
        let reply = Self.certificateReply(certificates)
        let receiver = try Receiver { _, _ in reply }
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver, events: nil, trusting: certificates.caPEM)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url).id, timeout: .seconds(30))
            #expect(task.error == nil)
            #expect(task.response?.statusCode == 200)
            let asked = try #require(receiver.challengeEvents.first)
            #expect(asked["type"] == "session.didReceiveChallenge")
            #expect(asked["data"]?["challenge"]?["protectionSpace"]?["authenticationMethod"] == "clientCertificate")
        }
    }

    @Test("without the session-level event, the client certificate challenge goes to the task level; a default answer is -1206")
    func clientCertificateFallsBackToTaskLevel() async throws {
        let certificates = try Self.certificates.get()
        let origin = try TLSOrigin(certificates, requiresClientCertificate: true)
        let reply = Self.certificateReply(certificates)
        let answering = try Receiver { _, _ in reply }
        let declining = try Receiver { _, _ in #"{"disposition": "performDefaultHandling"}"# }
        defer { origin.stop(); answering.origin.stop(); declining.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let taskLevelOnly: Set<EventType> = [.taskDidReceiveChallenge, .taskDidCompleteWithError]
            let answered = try await session(ferry, receiver: answering, events: taskLevelOnly, trusting: certificates.caPEM)
            let task = try await ferry.completion(of: try await ferry.startTask(in: answered, kind: .data, url: origin.url).id, timeout: .seconds(30))
            #expect(task.error == nil)
            #expect(answering.challengeEvents.map { $0["type"] } == ["task.didReceiveChallenge"])

            let declined = try await session(ferry, receiver: declining, events: nil, trusting: certificates.caPEM)
            let failed = try await ferry.completion(of: try await ferry.startTask(in: declined, kind: .data, url: origin.url).id, timeout: .seconds(30))
            #expect(failed.error?.code == -1206)
            #expect(declining.challengeEvents.count == 1)
        }
    }

    @Test("rejectProtectionSpace asks again about the next protection space")
    func rejectAsksAboutTheNextSpace() async throws {
        // Offers Digest (stronger, asked first) and Basic; accepts only Basic.
        let origin = try TestOrigin { request, responder in
            let expected = "Basic " + Data("ada:lovelace".utf8).base64EncodedString()
            if request.header("Authorization") == expected {
                try responder.respond(status: 200, body: Array("secret".utf8))
                return
            }
            try responder.respond(status: 401, headers: [
                ("WWW-Authenticate", #"Digest realm="vault", qop="auth", nonce="abc", algorithm=MD5"#),
                ("WWW-Authenticate", #"Basic realm="vault""#),
            ], body: [])
        }
        let receiver = try Receiver { _, earlier in
            earlier == 0 ? #"{"disposition": "rejectProtectionSpace"}"#
                : #"{"disposition": "useCredential", "credential": {"user": "ada", "password": "lovelace"}}"#
        }
        defer { origin.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            let session = try await session(ferry, receiver: receiver, events: nil)
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: origin.url("/vault")).id)
            #expect(task.response?.statusCode == 200)
            let methods = receiver.challengeEvents.map { $0["data"]?["challenge"]?["protectionSpace"]?["authenticationMethod"] }
            #expect(methods == ["httpDigest", "httpBasic"])
        }
    }

    @Test("a 407 from the session's HTTP proxy is a task-level challenge with the proxy's protection space")
    func proxyChallenge() async throws {
        let proxy = try TestOrigin { request, responder in
            if request.header("Proxy-Authorization") == "Basic " + Data("ada:lovelace".utf8).base64EncodedString() {
                try responder.respond(status: 200, body: Array("via proxy".utf8))
                return
            }
            try responder.respond(status: 407, headers: [("Proxy-Authenticate", #"Basic realm="gate""#)], body: [])
        }
        let receiver = try Receiver { _, _ in #"{"disposition": "useCredential", "credential": {"user": "ada", "password": "lovelace"}}"# }
        defer { proxy.stop(); receiver.origin.stop() }
        try await EngineHarness.run(webhooks: Self.webhooks) { ferry in
            var configuration = SessionConfiguration(kind: .default)
            configuration.connectionProxyDictionary = ProxyConfiguration(http: ProxyEndpoint(host: "127.0.0.1", port: proxy.port))
            let session = try await ferry.database.database.sessions.create(
                tenantID: ferry.tenant.id, SessionCreation(configuration: configuration, delegate: DelegateSpec(url: receiver.url))
            ).session
            let task = try await ferry.completion(of: try await ferry.startTask(in: session, kind: .data, url: "http://127.0.0.1:9/behind").id)
            #expect(task.response?.statusCode == 200)
            #expect(try await ferry.responseBody(of: task.id) == Array("via proxy".utf8))
            let asked = try #require(receiver.challengeEvents.first)
            #expect(asked["type"] == "task.didReceiveChallenge")
            let space = asked["data"]?["challenge"]?["protectionSpace"]
            #expect(space?["isProxy"] == true)
            #expect(space?["port"] == .number(Double(proxy.port)))
            #expect(space?["realm"] == "gate")
        }
    }
}
