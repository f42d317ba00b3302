import Foundation
import Testing

@testable import FerryCore

@Suite("ResumeDataToken")
struct ResumeDataTokenTests {
    private let key = [UInt8](repeating: 7, count: 32)
    private let otherKey = [UInt8](repeating: 8, count: 32)

    private let token = ResumeDataToken(
        tenantID: "ten_A",
        taskID: "tsk_1",
        url: "https://cdn.example/big.iso",
        validator: .strongETag("\"v1\""),
        bytesOnDisk: 1_048_576,
        expectedTotalBytes: 4_294_967_296,
        partialFile: "prt_0123456789",
        originalRequest: .init(url: "https://example.com/big.iso", httpMethod: "GET", allHTTPHeaderFields: ["Accept": "*/*", "X-Trace": "1"]),
        createdAt: Date(timeIntervalSinceReferenceDate: 754_000_000.25)
    )

    @Test func roundTrips() throws {
        let text = token.encode(signingKey: key)
        #expect(try ResumeDataToken.decode(text, signingKey: key, expectedTenantID: "ten_A") == token)

        var lastModified = token
        lastModified.validator = .lastModified("Tue, 15 Nov 1994 08:12:31 GMT")
        lastModified.expectedTotalBytes = nil
        let again = lastModified.encode(signingKey: key)
        #expect(try ResumeDataToken.decode(again, signingKey: key, expectedTenantID: "ten_A") == lastModified)
    }

    @Test("the original request is carried whole: timeout, cache policy and network properties")
    func carriesTheWholeRequest() throws {
        var request = TransferRequest(
            url: "https://example.com/big.iso", allHTTPHeaderFields: ["X-Trace": "1"], timeoutInterval: 7.5,
            cachePolicy: .reloadIgnoringLocalAndRemoteCacheData
        )
        request.allowsCellularAccess = false
        request.networkServiceType = .background
        var whole = token
        whole.originalRequest = .init(request)
        let decoded = try ResumeDataToken.decode(whole.encode(signingKey: key), signingKey: key, expectedTenantID: "ten_A")
        #expect(decoded.originalRequest.transferRequest == request)
        #expect(decoded.originalRequest.timeoutInterval == 7.5)
        #expect(decoded.originalRequest.cachePolicy == .reloadIgnoringLocalAndRemoteCacheData)
    }

    @Test("a token issued before the request was carried whole still decodes, with the session's defaults")
    func earlierTokensDecode() throws {
        let payload = #"{"bytesOnDisk":10,"createdAt":0,"originalRequest":{"allHTTPHeaderFields":{},"httpMethod":"GET","url":"https://example.com/a"},"partialFile":"prt_1","taskID":"tsk_1","tenantID":"ten_A","url":"https://example.com/a","validator":{"strongETag":{"_0":"\"v1\""}}}"#
        let signedPart = "frd1." + Base64URL.encode(Array(payload.utf8))
        let text = signedPart + "." + Base64URL.encode(ResumeDataToken.mac(signedPart, signingKey: key))
        let decoded = try ResumeDataToken.decode(text, signingKey: key, expectedTenantID: "ten_A")
        #expect(decoded.originalRequest.transferRequest == TransferRequest(url: "https://example.com/a"))
    }

    @Test func isVersionedURLSafeAndUnpadded() {
        let text = token.encode(signingKey: key)
        #expect(text.hasPrefix("frd1."))
        #expect(text.split(separator: ".", omittingEmptySubsequences: false).count == 3)
        #expect(!text.contains { $0 == "+" || $0 == "/" || $0 == "=" })
        #expect(token.encode(signingKey: key) == text)
    }

    @Test func anotherTenantCannotUseIt() {
        let text = token.encode(signingKey: key)
        #expect(throws: ResumeDataError.wrongTenant) {
            try ResumeDataToken.decode(text, signingKey: key, expectedTenantID: "ten_B")
        }
    }

    @Test func aTokenSignedWithAnotherKeyIsForged() {
        let text = token.encode(signingKey: otherKey)
        #expect(throws: ResumeDataError.badSignature) {
            try ResumeDataToken.decode(text, signingKey: key, expectedTenantID: "ten_A")
        }
    }

    @Test func rewritingThePayloadBreaksTheSignature() throws {
        // Claim the token for tenant B and point it at another file, keeping the old MAC.
        let parts = token.encode(signingKey: key).split(separator: ".").map(String.init)
        let payload = try #require(Base64URL.decode(Substring(parts[1])))
        let rewritten = String(decoding: payload, as: UTF8.self)
            .replacingOccurrences(of: "ten_A", with: "ten_B")
            .replacingOccurrences(of: "prt_0123456789", with: "prt_someone_else")
        let forged = [parts[0], Base64URL.encode(Array(rewritten.utf8)), parts[2]].joined(separator: ".")
        #expect(throws: ResumeDataError.badSignature) {
            try ResumeDataToken.decode(forged, signingKey: key, expectedTenantID: "ten_B")
        }
    }

    @Test func flippingAnySignatureSymbolIsRejected() {
        let text = token.encode(signingKey: key)
        let macStart = text.lastIndex(of: ".").map { text.index(after: $0) } ?? text.endIndex
        let first = text[macStart]
        let altered = text.replacingCharacters(in: macStart...macStart, with: first == "A" ? "B" : "A")
        #expect(throws: ResumeDataError.badSignature) {
            try ResumeDataToken.decode(altered, signingKey: key, expectedTenantID: "ten_A")
        }
    }

    @Test func otherVersionsAreNamed() {
        #expect(throws: ResumeDataError.unsupportedVersion("frd2")) {
            try ResumeDataToken.decode("frd2.eyJ9.AAAA", signingKey: key, expectedTenantID: "ten_A")
        }
    }

    @Test(arguments: [
        "", "hello", "frd", "frd1", "frd1.", "frd1.abc", "frd1.a.b.c", "frd1.!!!.AAAA", "frd1.AAAA.***",
        "frdx.AAAA.AAAA", "frd1.AAAA.AAA=", "frd1.A.AAAA",
    ])
    func malformedTextIsRejected(text: String) {
        #expect(throws: ResumeDataError.malformed) {
            try ResumeDataToken.decode(text, signingKey: key, expectedTenantID: "ten_A")
        }
    }

    @Test func correctlySignedGarbageIsMalformed() {
        let signedPart = "frd1." + Base64URL.encode(Array("not json".utf8))
        let text = signedPart + "." + Base64URL.encode(ResumeDataToken.mac(signedPart, signingKey: key))
        #expect(throws: ResumeDataError.malformed) {
            try ResumeDataToken.decode(text, signingKey: key, expectedTenantID: "ten_A")
        }
    }

    @Test func oversizedTextIsRejectedUnread() {
        let text = "frd1." + String(repeating: "A", count: 70_000) + ".AAAA"
        #expect(throws: ResumeDataError.malformed) {
            try ResumeDataToken.decode(text, signingKey: key, expectedTenantID: "ten_A")
        }
    }

    @Test func errorsDoNotLeakTheOtherTenant() {
        #expect(!ResumeDataError.wrongTenant.description.contains("ten_"))
        #expect(ResumeDataError.badSignature.description != ResumeDataError.malformed.description)
    }
}
