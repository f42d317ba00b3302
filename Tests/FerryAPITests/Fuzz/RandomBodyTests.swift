import FerryCore
import Foundation
import HTTPTypes
import Testing

@Suite("Random JSON against every POST endpoint: never a 5xx, never a half-written row", .sharedHarnesses)
struct RandomBodyTests {
    /// A POST endpoint, the words its bodies use, and valid bodies with a hole (§) to fill.
    enum Target: String, CaseIterable, Sendable {
        case tenants, sessions, tasks, commands

        var vocabulary: [String] {
            switch self {
            case .tenants:
                ["name", "quotas", "maxConcurrentTransfers", "maxStoredBytes", "requestsPerSecond", "maxTaskBytes"]
            case .sessions:
                [
                    "configuration", "kind", "identifier", "timeoutIntervalForRequest", "timeoutIntervalForResource",
                    "httpMaximumConnectionsPerHost", "httpAdditionalHeaders", "requestCachePolicy", "httpShouldSetCookies",
                    "httpCookieAcceptPolicy", "httpShouldUsePipelining", "tlsMinimumSupportedProtocolVersion",
                    "tlsMaximumSupportedProtocolVersion", "connectionProxyDictionary", "HTTPEnable", "HTTPProxy", "HTTPPort",
                    "SOCKSEnable", "waitsForConnectivity", "isDiscretionary", "sessionSendsLaunchEvents", "sessionDescription",
                    "delegate", "url", "secret", "events", "allowsCellularAccess", "networkServiceType", "multipathServiceType",
                    "sharedContainerIdentifier", "shouldUseExtendedBackgroundIdleMode",
                ]
            case .tasks:
                [
                    "kind", "request", "url", "httpMethod", "allHTTPHeaderFields", "timeoutInterval", "cachePolicy", "httpBody",
                    "body", "base64", "text", "blob", "stream", "resumeData", "priority", "taskDescription", "earliestBeginDate",
                    "delegate", "resume", "allowsExpensiveNetworkAccess", "networkServiceType", "countOfBytesClientExpectsToSend",
                ]
            case .commands:
                ["resumeData", "force", "reason"]
            }
        }

        /// The largest body the endpoint reads (JSONBody's limits); a larger one must be a 413.
        var bodyLimit: Int {
            self == .tasks ? 8 * 1024 * 1024 * 4 / 3 + 64 * 1024 : 64 * 1024
        }

        var templates: [String] {
            switch self {
            case .tenants:
                [#"{"name":§}"#, #"{"name":"acme","quotas":§}"#, #"{"name":"acme","quotas":{"maxConcurrentTransfers":§}}"#,
                 #"{"name":"acme","quotas":{"maxStoredBytes":§,"requestsPerSecond":§}}"#, #"{"name":"acme",§:§}"#]
            case .sessions:
                [#"{"configuration":§}"#, #"{"configuration":{"kind":§}}"#, #"{"configuration":{"kind":"background","identifier":§}}"#,
                 #"{"configuration":{"kind":"default","timeoutIntervalForRequest":§,"httpMaximumConnectionsPerHost":§}}"#,
                 #"{"configuration":{"kind":"default","httpAdditionalHeaders":§}}"#,
                 #"{"configuration":{"kind":"default","httpAdditionalHeaders":{"X-A":§}}}"#,
                 #"{"configuration":{"kind":"default","connectionProxyDictionary":{"HTTPEnable":true,"HTTPProxy":§,"HTTPPort":§}}}"#,
                 #"{"configuration":{"kind":"default","tlsMinimumSupportedProtocolVersion":§}}"#,
                 #"{"configuration":{"kind":"ephemeral"},"sessionDescription":§}"#, #"{"configuration":{"kind":"default"},"delegate":§}"#,
                 #"{"configuration":{"kind":"default",§:§}}"#]
            case .tasks:
                [#"{"kind":§,"request":{"url":"http://example.com/a"}}"#, #"{"kind":"data","request":{"url":§}}"#,
                 #"{"kind":"data","request":§}"#, #"{"kind":"data","request":{"url":"http://example.com/a","httpMethod":§}}"#,
                 #"{"kind":"data","request":{"url":"http://example.com/a","allHTTPHeaderFields":§}}"#,
                 #"{"kind":"data","request":{"url":"http://example.com/a","allHTTPHeaderFields":{"X-A":§}}}"#,
                 #"{"kind":"data","request":{"url":"http://example.com/a","timeoutInterval":§,"cachePolicy":§}}"#,
                 #"{"kind":"data","request":{"url":"http://example.com/a","httpBody":§}}"#,
                 #"{"kind":"upload","request":{"url":"http://example.com/a"},"body":§}"#,
                 #"{"kind":"upload","request":{"url":"http://example.com/a"},"body":{"text":§}}"#,
                 #"{"kind":"upload","request":{"url":"http://example.com/a"},"body":{"base64":§}}"#,
                 #"{"kind":"download","resumeData":§}"#,
                 #"{"kind":"data","request":{"url":"http://example.com/a"},"priority":§,"taskDescription":§}"#,
                 #"{"kind":"data","request":{"url":"http://example.com/a"},"earliestBeginDate":§,"resume":§}"#,
                 #"{"kind":"download","request":{"url":"http://example.com/a"},"delegate":§}"#,
                 #"{"kind":"data","request":{"url":"http://example.com/a"},§:§}"#]
            case .commands:
                [#"{§:§}"#, "§"]
            }
        }
    }

    /// `FERRY_FUZZ_DOCUMENTS` and `FERRY_FUZZ_SEED` run a longer or different campaign; a
    /// failure names its seed and document, so it can be replayed.
    static let documentsPerTarget = ProcessInfo.processInfo.environment["FERRY_FUZZ_DOCUMENTS"].flatMap(Int.init) ?? 300
    static let baseSeed = ProcessInfo.processInfo.environment["FERRY_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0xFE44_0000

    @Test("a few hundred random documents", arguments: Target.allCases)
    func randomDocuments(_ target: Target) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession()
            let task = try await tenant.createTask(in: session.id, ["kind": "download", "request": ["url": "http://example.com/a"]])
            let seed = Self.baseSeed &+ UInt64(Target.allCases.firstIndex(of: target) ?? 0)
            var generator = RandomJSON(seed: seed, vocabulary: target.vocabulary)
            let commands = ["resume", "suspend", "cancel", "cancelByProducingResumeData"]

            for index in 0..<Self.documentsPerTarget {
                let document = index % 2 == 0 ? generator.document() : generator.filling(oneOf: target.templates)
                let (client, path): (FerryClient, String) = switch target {
                case .tenants: (api.operatorClient, "/admin/v1/tenants")
                case .sessions: (tenant, "/v1/sessions")
                case .tasks: (tenant, "/v1/sessions/\(session.id)/tasks")
                case .commands: (tenant, "/v1/tasks/\(task.id)/\(commands[index % commands.count])")
                }
                let before = try await api.rowCounts()

                let reply = try await client.send(.post, path, raw: Array(document.utf8))

                let label = "document \(index) of seed \(seed), \(document.utf8.count) bytes: \(document.prefix(300))"
                if document.utf8.count > target.bodyLimit {
                    expectProblem(reply, status: .contentTooLarge)
                } else {
                    expectNoServerError(reply, label)
                }
                if reply.status.code >= 400 {
                    #expect(try await api.rowCounts() == before, "a refused request wrote rows: \(label)")
                }
            }
        }
    }
}
