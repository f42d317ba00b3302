import FerryCore
import FerryTestSupport
import Testing

@Suite("POST /v1/sessions: every configuration field's bad values are a 4xx naming it, and nothing is written", .sharedHarnesses)
struct SessionCreationValidationTests {
    /// A case whose `configuration` is the default one with `member` set to `value`.
    static func configuration(_ member: String, _ value: JSONValue, field: String? = nil) -> BadInput {
        BadInput(
            "configuration.\(member) = \(value.serializedText)",
            ["configuration": JSONValue.object(["kind": "default"]).setting(member, to: value)],
            field: field ?? "configuration.\(member.split(separator: ".").first ?? "")"
        )
    }

    static func background(_ identifier: JSONValue?, field: String = "configuration.identifier") -> BadInput {
        BadInput(
            "background identifier \(identifier?.serializedText ?? "missing")",
            ["configuration": JSONValue.object(["kind": "background"]).setting("identifier", to: identifier)],
            field: field
        )
    }

    static func proxy(_ dictionary: JSONValue, field: String) -> BadInput {
        configuration("connectionProxyDictionary", dictionary, field: "configuration.connectionProxyDictionary.\(field)")
    }

    static let enabledHTTPProxy: JSONValue = ["HTTPEnable": true, "HTTPProxy": "proxy.example", "HTTPPort": 3128]

    /// A client certificate whose key is `key` (the certificate is only checked for its label here).
    static func clientKey(_ label: String, _ key: String, passphrase: String? = nil) -> BadInput {
        var configuration: JSONValue = [
            "kind": "default", "tlsClientCertificatePEM": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            "tlsClientPrivateKeyPEM": .string(key),
        ]
        if let passphrase { configuration = configuration.setting("tlsClientPrivateKeyPassphrase", to: .string(passphrase)) }
        return BadInput(label, ["configuration": configuration], field: "configuration.tlsClientPrivateKeyPEM")
    }

    /// An `ENCRYPTED PRIVATE KEY` block that is not PKCS #8.
    static let brokenEncryptedKey = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIT/////AAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"

    static let cases: [BadInput] = [
        BadInput("configuration missing", [:], field: "configuration"),
        BadInput("configuration a string", ["configuration": "default"], field: "configuration"),
        BadInput("configuration an array", ["configuration": [["kind": "default"]]], field: "configuration"),
        BadInput("kind missing", ["configuration": [:]], field: "configuration.kind"),
        configuration("kind", "foreground"),
        configuration("kind", "DEFAULT"),
        configuration("kind", 1),
        configuration("kind", ["default"]),
        background(nil),
        background(""),
        background(7),
        background(.repeated("i", count: 257)),
        background("nightly\u{0}sync"),
        configuration("identifier", "only-for-background"),
        configuration("timeoutIntervalForRequest", 0),
        configuration("timeoutIntervalForRequest", -1),
        configuration("timeoutIntervalForRequest", "60"),
        configuration("timeoutIntervalForRequest", 1e300),
        configuration("timeoutIntervalForRequest", true),
        configuration("timeoutIntervalForResource", 0),
        configuration("timeoutIntervalForResource", 2_419_201),
        configuration("timeoutIntervalForResource", [60]),
        configuration("httpMaximumConnectionsPerHost", 0),
        configuration("httpMaximumConnectionsPerHost", -3),
        configuration("httpMaximumConnectionsPerHost", 65),
        configuration("httpMaximumConnectionsPerHost", 2.5),
        configuration("httpMaximumConnectionsPerHost", 1e20),
        configuration("httpMaximumConnectionsPerHost", "6"),
        configuration("httpAdditionalHeaders", "X-A: 1"),
        configuration("httpAdditionalHeaders", ["X-A", "1"]),
        configuration("httpAdditionalHeaders", ["X-A": 1], field: "configuration.httpAdditionalHeaders.X-A"),
        configuration("httpAdditionalHeaders", ["X-A": "a\r\nInjected: 1"], field: "configuration.httpAdditionalHeaders.X-A"),
        configuration("httpAdditionalHeaders", ["X-A": "a\nInjected: 1"], field: "configuration.httpAdditionalHeaders.X-A"),
        configuration("httpAdditionalHeaders", ["X-A": "a\rb"], field: "configuration.httpAdditionalHeaders.X-A"),
        configuration("httpAdditionalHeaders", ["X-A": "a\u{0}b"], field: "configuration.httpAdditionalHeaders.X-A"),
        configuration("httpAdditionalHeaders", ["X-A": "a\u{1}b"], field: "configuration.httpAdditionalHeaders.X-A"),
        configuration("httpAdditionalHeaders", ["Bad Name": "x"], field: "configuration.httpAdditionalHeaders.Bad Name"),
        configuration("httpAdditionalHeaders", ["X-A\r\nInjected": "x"], field: "configuration.httpAdditionalHeaders.X-A\r\nInjected"),
        configuration("httpAdditionalHeaders", ["Host": "evil.example"], field: "configuration.httpAdditionalHeaders.Host"),
        configuration("httpAdditionalHeaders", ["content-length": "5"], field: "configuration.httpAdditionalHeaders.content-length"),
        configuration("httpAdditionalHeaders", .object(Dictionary(uniqueKeysWithValues: (0...100).map { ("X-H\($0)", JSONValue.string("v")) }))),
        configuration("requestCachePolicy", "sometimes"),
        configuration("requestCachePolicy", 0),
        configuration("httpShouldSetCookies", "yes"),
        configuration("httpCookieAcceptPolicy", "maybe"),
        configuration("httpShouldUsePipelining", 1),
        configuration("tlsMinimumSupportedProtocolVersion", "SSLv3"),
        configuration("tlsMaximumSupportedProtocolVersion", "TLSv14"),
        BadInput(
            "TLS minimum above maximum",
            ["configuration": ["kind": "default", "tlsMinimumSupportedProtocolVersion": "TLSv13", "tlsMaximumSupportedProtocolVersion": "TLSv12"]],
            field: "configuration.tlsMaximumSupportedProtocolVersion"
        ),
        configuration("connectionProxyDictionary", "http://proxy.example:3128"),
        proxy(["HTTPEnable": true], field: "HTTPProxy"),
        proxy(["HTTPEnable": true, "HTTPProxy": "proxy.example"], field: "HTTPPort"),
        proxy(enabledHTTPProxy.setting("HTTPPort", to: 0), field: "HTTPPort"),
        proxy(enabledHTTPProxy.setting("HTTPPort", to: 65536), field: "HTTPPort"),
        proxy(enabledHTTPProxy.setting("HTTPPort", to: "3128"), field: "HTTPPort"),
        proxy(enabledHTTPProxy.setting("HTTPProxy", to: "proxy example"), field: "HTTPProxy"),
        proxy(enabledHTTPProxy.setting("HTTPProxy", to: "proxy\r\nX-Injected: 1"), field: "HTTPProxy"),
        proxy(enabledHTTPProxy.setting("HTTPProxy", to: ""), field: "HTTPProxy"),
        proxy(["HTTPSEnable": "yes"], field: "HTTPSEnable"),
        proxy(["SOCKSEnable": true, "SOCKSProxy": "socks.example", "SOCKSPort": -1], field: "SOCKSPort"),
        proxy(["FTPEnable": true], field: "FTPEnable"),
        // libcurl 7.88 crashes on an encrypted key without a passphrase (issue 17).
        clientKey("encrypted client key without a passphrase", PrivateKeyFixtures.pbkdf2Default),
        clientKey("client key with 10,000,000 PBKDF2 iterations", PrivateKeyFixtures.pbkdf2Huge, passphrase: "secret"),
        clientKey("ENCRYPTED PRIVATE KEY that is not PKCS #8", brokenEncryptedKey, passphrase: "secret"),
        configuration("waitsForConnectivity", "true"),
        configuration("isDiscretionary", 0),
        configuration("sessionSendsLaunchEvents", "no"),
        configuration("allowsCellularAccess", "yes"),
        configuration("allowsExpensiveNetworkAccess", 1),
        configuration("allowsConstrainedNetworkAccess", ["true"]),
        configuration("networkServiceType", "fast"),
        configuration("networkServiceType", "NSURLNetworkServiceTypeVideo"),
        configuration("networkServiceType", 2),
        configuration("multipathServiceType", "all"),
        configuration("multipathServiceType", true),
        configuration("sharedContainerIdentifier", ""),
        configuration("sharedContainerIdentifier", 5),
        configuration("sharedContainerIdentifier", .repeated("g", count: 257)),
        configuration("shouldUseExtendedBackgroundIdleMode", "false"),
        configuration("discretionary", true),
        configuration("timeoutIntervalForReqest", 30),
        BadInput("sessionDescription a number", ["configuration": ["kind": "default"], "sessionDescription": 5], field: "sessionDescription"),
        BadInput(
            "sessionDescription 4097 bytes",
            ["configuration": ["kind": "default"], "sessionDescription": .repeated("d", count: 4097)],
            field: "sessionDescription"
        ),
        BadInput(
            "sessionDescription with NUL", ["configuration": ["kind": "default"], "sessionDescription": "nightly\u{0}"],
            field: "sessionDescription"
        ),
        BadInput("delegate a string", ["configuration": ["kind": "default"], "delegate": "https://hooks.example/"], field: "delegate"),
        BadInput("delegate.url ftp", ["configuration": ["kind": "default"], "delegate": ["url": "ftp://hooks.example/"]], field: "delegate.url"),
        BadInput(
            "delegate.secret not whsec_", ["configuration": ["kind": "default"], "delegate": ["url": "https://hooks.example/", "secret": "hunter2"]],
            field: "delegate.secret"
        ),
        BadInput(
            "delegate.events unknown", ["configuration": ["kind": "default"], "delegate": ["url": "https://hooks.example/", "events": ["task.nope"]]],
            field: "delegate.events[0]"
        ),
        BadInput(
            "delegate.secret not base64", ["configuration": ["kind": "default"], "delegate": ["url": "https://hooks.example/", "secret": "whsec_!!!"]],
            field: "delegate.secret"
        ),
        BadInput(
            "delegate unknown member", ["configuration": ["kind": "default"], "delegate": ["url": "https://hooks.example/", "retries": 3]],
            field: "delegate.retries"
        ),
        BadInput("unknown top-level field", ["configuration": ["kind": "default"], "config": ["kind": "default"]], field: "config"),
        BadInput("a trailing comma", raw: #"{"configuration":{"kind":"default",}}"#),
        BadInput("kind twice", raw: #"{"configuration":{"kind":"default","kind":"background"}}"#, field: "configuration.kind"),
    ] + BadInput.malformedBodies

    @Test("refused", arguments: cases)
    func refuses(_ input: BadInput) async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            try await input.expectRefused(.post, "/v1/sessions", with: tenant, in: api)
        }
    }

    @Test("a configuration with every field set is accepted and reported back")
    func acceptsEveryField() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let configuration: JSONValue = [
                "kind": "background", "identifier": "nightly-sync",
                "timeoutIntervalForRequest": 30.5, "timeoutIntervalForResource": 3600, "httpMaximumConnectionsPerHost": 4,
                "httpAdditionalHeaders": ["X-Client": "tests"], "requestCachePolicy": "reloadIgnoringLocalCacheData",
                "httpShouldSetCookies": false, "httpCookieAcceptPolicy": "never", "httpShouldUsePipelining": true,
                "tlsMinimumSupportedProtocolVersion": "TLSv12", "tlsMaximumSupportedProtocolVersion": "TLSv13",
                "connectionProxyDictionary": ["HTTPEnable": true, "HTTPProxy": "proxy.example", "HTTPPort": 3128],
                "waitsForConnectivity": true, "isDiscretionary": true, "sessionSendsLaunchEvents": false,
            ]
            let session = try await tenant.createSession(configuration)
            #expect(session.configuration["identifier"] == "nightly-sync")
            #expect(session.configuration["timeoutIntervalForRequest"] == 30.5)
            #expect(session.configuration["httpMaximumConnectionsPerHost"] == 4)
            #expect(session.configuration["httpAdditionalHeaders"] == ["X-Client": "tests"])

            let again = try await tenant.createSession(configuration, expecting: .ok)
            #expect(again.id == session.id, "re-creating a background session re-attaches")
        }
    }

    @Test("an encrypted client key with its passphrase and a usual iteration count is accepted, and not shown back")
    func acceptsEncryptedKeyWithPassphrase() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let session = try await tenant.createSession([
                "kind": "default", "tlsClientCertificatePEM": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
                "tlsClientPrivateKeyPEM": .string(PrivateKeyFixtures.pbkdf2Default), "tlsClientPrivateKeyPassphrase": "secret",
            ])
            #expect(session.configuration["tlsClientPrivateKeyPEM"] == "[redacted]")
        }
    }

    @Test("URLSessionConfiguration's network access fields are accepted, shown back, and default as URLSession's")
    func networkAccessFields() async throws {
        try await APIHarness.run { api in
            let tenant = try await api.makeTenant()
            let given: [String: JSONValue] = [
                "allowsCellularAccess": false, "allowsExpensiveNetworkAccess": false, "allowsConstrainedNetworkAccess": false,
                "networkServiceType": "responsiveData", "multipathServiceType": "handover",
                "sharedContainerIdentifier": "group.example.app", "shouldUseExtendedBackgroundIdleMode": true,
            ]
            let session = try await tenant.createSession(JSONValue.object(given.merging(["kind": "default"]) { $1 }))
            let read = try await tenant.session(session.id)
            for (name, value) in given {
                #expect(session.configuration[name] == value, "\(name) is shown back")
                #expect(read.configuration[name] == value, "\(name) is stored")
            }
            let defaults = try await tenant.createSession()
            #expect(defaults.configuration["allowsCellularAccess"] == true)
            #expect(defaults.configuration["allowsExpensiveNetworkAccess"] == true)
            #expect(defaults.configuration["allowsConstrainedNetworkAccess"] == true)
            #expect(defaults.configuration["networkServiceType"] == "default")
            #expect(defaults.configuration["multipathServiceType"] == "none")
            #expect(defaults.configuration["shouldUseExtendedBackgroundIdleMode"] == false)
            #expect(defaults.configuration.objectValue?.keys.contains("sharedContainerIdentifier") == false)
        }
    }
}

extension JSONValue {
    /// The value as compact JSON text, for case labels.
    var serializedText: String {
        let text = String(decoding: serialized(), as: UTF8.self)
        return text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}
