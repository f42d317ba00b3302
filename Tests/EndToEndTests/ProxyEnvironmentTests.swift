import Foundation
import Testing
import TestOrigin

/// Proxies come from the session's configuration only (SAFETY.md): a `NO_PROXY` in the
/// environment Ferry runs in must not send a session's transfers around its proxy (issue 17).
@Suite("The process environment's NO_PROXY")
struct ProxyEnvironmentTests {
    @Test("does not exempt a host from the session's proxy", .timeLimit(.minutes(2)))
    func noProxyIsIgnored() async throws {
        let proxy = try TestOrigin { _, responder in try responder.respond(status: 200, body: Array("via proxy".utf8)) }
        let target = try TestOrigin { _, responder in try responder.respond(status: 200, body: Array("direct".utf8)) }
        defer { proxy.stop(); target.stop() }
        try await Testbed.run { testbed in
            let ferry = try await testbed.start("no-proxy") {
                $0.extraEnvironment = ["NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"]
            }
            let (_, client) = try await testbed.makeTenant(on: ferry)
            let session = try await client.createSession([
                "kind": "default",
                "connectionProxyDictionary": ["HTTPEnable": true, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port],
            ]).session
            let task = try await client.createDownload(in: session.id, url: target.url("/file"))
            let done = try await client.completion(of: task.id, timeout: .seconds(30))
            #expect(done.error == nil)
            #expect(done.response?.statusCode == 200)
            #expect(proxy.requests.map(\.target) == [target.url("/file")], "the request went through the session's proxy")
            #expect(target.requests.isEmpty, "not straight to the origin, as NO_PROXY would have it")
        }
    }
}
