import Curl
import Foundation
import Testing
import TestOrigin

/// The open-socket callback is the SSRF guard's choke point: with nobody to ask (no delegate),
/// it must refuse, not connect unchecked (issue 17).
@Suite("The socket guard without a delegate")
struct SocketGuardTests {
    @Test("a handle with no delegate opens no connection")
    func failsClosed() throws {
        let origin = try TestOrigin { _, responder in try responder.respond(status: 200, body: Array("reached".utf8)) }
        defer { origin.stop() }
        let easy = try CurlEasy()
        try easy.set(.url, origin.url("/guarded"))
        try easy.set(.proxy, "")
        let multi = try CurlMulti()
        try multi.add(easy)
        let deadline = Date().addingTimeInterval(10)
        var result: Int32?
        while result == nil, Date() < deadline {
            _ = try multi.perform()
            result = multi.completedTransfers().first?.result
            if result == nil { try multi.poll(timeoutMilliseconds: 50) }
        }
        try multi.remove(easy)
        // CURLE_COULDNT_CONNECT (7): the callback answered CURL_SOCKET_BAD.
        #expect(result == 7)
        #expect(origin.connectionsAccepted == 0)
    }
}
