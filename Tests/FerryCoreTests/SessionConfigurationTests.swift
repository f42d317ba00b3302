import FerryCore
import Testing

@Suite("Session configuration validation")
struct SessionConfigurationTests {
    private func configuration(_ body: String) throws -> SessionConfiguration {
        try SessionCreation(validating: try json(body), urlChecker: TestURLChecker()).configuration
    }

    private func error(_ body: String) -> ValidationError? {
        do {
            _ = try configuration(body)
            return nil
        } catch let error as ValidationError {
            return error
        } catch {
            return ValidationError(field: "?", message: "\(error)")
        }
    }

    @Test("an empty default configuration gets URLSession's defaults")
    func defaults() throws {
        let configuration = try configuration(#"{"configuration": {"kind": "default"}}"#)
        #expect(configuration.kind == .default)
        #expect(configuration.timeoutIntervalForRequest == 60)
        #expect(configuration.timeoutIntervalForResource == 604_800)
        #expect(configuration.httpMaximumConnectionsPerHost == 6)
        #expect(configuration.requestCachePolicy == .useProtocolCachePolicy)
        #expect(configuration.httpShouldSetCookies)
        #expect(configuration.httpCookieAcceptPolicy == .onlyFromMainDocumentDomain)
        #expect(configuration.tlsMinimumSupportedProtocolVersion == .TLSv12)
        #expect(configuration.tlsMaximumSupportedProtocolVersion == .TLSv13)
        #expect(configuration.connectionProxyDictionary == nil)
        #expect(!configuration.waitsForConnectivity)
    }

    @Test("every field is read")
    func everyField() throws {
        let configuration = try configuration("""
            {"configuration": {"kind": "background", "identifier": "nightly", "timeoutIntervalForRequest": 5.5,
             "timeoutIntervalForResource": 3600, "httpMaximumConnectionsPerHost": 2,
             "httpAdditionalHeaders": {"X-Team": "blue"}, "requestCachePolicy": "reloadIgnoringLocalCacheData",
             "httpShouldSetCookies": false, "httpCookieAcceptPolicy": "never", "httpShouldUsePipelining": true,
             "tlsMinimumSupportedProtocolVersion": "TLSv13", "tlsMaximumSupportedProtocolVersion": "TLSv13",
             "connectionProxyDictionary": {"HTTPEnable": true, "HTTPProxy": "proxy.local", "HTTPPort": 3128},
             "waitsForConnectivity": true, "isDiscretionary": true, "sessionSendsLaunchEvents": false}}
            """)
        #expect(configuration.identifier == "nightly")
        #expect(configuration.timeoutIntervalForRequest == 5.5)
        #expect(configuration.httpMaximumConnectionsPerHost == 2)
        #expect(configuration.httpAdditionalHeaders == ["X-Team": "blue"])
        #expect(configuration.httpCookieAcceptPolicy == .never)
        #expect(configuration.connectionProxyDictionary?.http == ProxyEndpoint(host: "proxy.local", port: 3128))
        #expect(configuration.connectionProxyDictionary?.proxy(forScheme: "https") == nil)
        #expect(configuration.waitsForConnectivity)
        #expect(!configuration.sessionSendsLaunchEvents)
    }

    @Test("bad values name their field", arguments: [
        (#"{}"#, "configuration"),
        (#"{"configuration": 3}"#, "configuration"),
        (#"{"configuration": {}}"#, "configuration.kind"),
        (#"{"configuration": {"kind": "foreground"}}"#, "configuration.kind"),
        (#"{"configuration": {"kind": "background"}}"#, "configuration.identifier"),
        (#"{"configuration": {"kind": "default", "identifier": "x"}}"#, "configuration.identifier"),
        (#"{"configuration": {"kind": "default", "timeoutIntervalForRequest": -1}}"#, "configuration.timeoutIntervalForRequest"),
        (#"{"configuration": {"kind": "default", "timeoutIntervalForRequest": "60"}}"#, "configuration.timeoutIntervalForRequest"),
        (#"{"configuration": {"kind": "default", "timeoutIntervalForResource": 1e300}}"#, "configuration.timeoutIntervalForResource"),
        (#"{"configuration": {"kind": "default", "httpMaximumConnectionsPerHost": 0}}"#, "configuration.httpMaximumConnectionsPerHost"),
        (#"{"configuration": {"kind": "default", "httpMaximumConnectionsPerHost": 2.5}}"#, "configuration.httpMaximumConnectionsPerHost"),
        (#"{"configuration": {"kind": "default", "httpAdditionalHeaders": {"Bad Name": "x"}}}"#, "configuration.httpAdditionalHeaders.Bad Name"),
        (#"{"configuration": {"kind": "default", "httpAdditionalHeaders": {"X": "a\r\nInjected: 1"}}}"#, "configuration.httpAdditionalHeaders.X"),
        (#"{"configuration": {"kind": "default", "httpAdditionalHeaders": {"Content-Length": "1"}}}"#, "configuration.httpAdditionalHeaders.Content-Length"),
        (#"{"configuration": {"kind": "default", "httpAdditionalHeaders": {"X": 1}}}"#, "configuration.httpAdditionalHeaders.X"),
        (#"{"configuration": {"kind": "default", "requestCachePolicy": "sometimes"}}"#, "configuration.requestCachePolicy"),
        (#"{"configuration": {"kind": "default", "httpShouldSetCookies": "yes"}}"#, "configuration.httpShouldSetCookies"),
        (#"{"configuration": {"kind": "default", "tlsMinimumSupportedProtocolVersion": "DTLSv12"}}"#, "configuration.tlsMinimumSupportedProtocolVersion"),
        (#"{"configuration": {"kind": "default", "tlsMinimumSupportedProtocolVersion": "TLSv13", "tlsMaximumSupportedProtocolVersion": "TLSv12"}}"#, "configuration.tlsMaximumSupportedProtocolVersion"),
        (#"{"configuration": {"kind": "default", "connectionProxyDictionary": {"HTTPEnable": true}}}"#, "configuration.connectionProxyDictionary.HTTPProxy"),
        (#"{"configuration": {"kind": "default", "connectionProxyDictionary": {"HTTPEnable": true, "HTTPProxy": "p", "HTTPPort": 70000}}}"#, "configuration.connectionProxyDictionary.HTTPPort"),
        (#"{"configuration": {"kind": "default", "connectionProxyDictionary": {"FTPEnable": true}}}"#, "configuration.connectionProxyDictionary.FTPEnable"),
        (#"{"configuration": {"kind": "default", "allowsCellularAccess": "yes"}}"#, "configuration.allowsCellularAccess"),
        (#"{"configuration": {"kind": "default", "networkServiceType": "NSURLNetworkServiceTypeVoIP"}}"#, "configuration.networkServiceType"),
        (#"{"configuration": {"kind": "default", "multipathServiceType": "handoff"}}"#, "configuration.multipathServiceType"),
        (#"{"configuration": {"kind": "default", "allowsCellular": true}}"#, "configuration.allowsCellular"),
        (#"{"configuration": {"kind": "default"}, "extra": 1}"#, "extra"),
        (#"{"configuration": {"kind": "default"}, "sessionDescription": 7}"#, "sessionDescription"),
    ])
    func rejected(body: String, field: String) {
        #expect(error(body)?.field == field)
    }

    @Test("malformed JSON is a syntax error, not a crash")
    func malformed() {
        #expect(throws: JSONSyntaxError.self) { try json(#"{"configuration": "#) }
        #expect(throws: JSONSyntaxError.self) { try json(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)) }
    }
}
