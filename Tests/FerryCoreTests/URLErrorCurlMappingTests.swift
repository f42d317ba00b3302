import Testing

@testable import FerryCore

@Suite("CURLcode → NSURLErrorDomain")
struct URLErrorCurlMappingTests {
    @Test(arguments: [
        (Int32(1), -1002), (3, -1000), (5, -1003), (6, -1003), (7, -1004), (8, -1017), (16, -1005), (18, -1005),
        (23, -3003), (25, -1005), (26, -1021), (27, -1), (28, -1001), (33, -1011), (35, -1200), (42, -999),
        (45, -1004), (47, -1007), (52, -1005), (53, -1200), (54, -1200), (55, -1005), (56, -1005), (58, -1205),
        (59, -1200), (60, -1202), (61, -1016), (63, -1103), (64, -1200), (65, -1021), (67, -1013), (77, -1200),
        (80, -1200), (82, -1200), (83, -1202), (89, -1004), (90, -1202), (91, -1202), (94, -1013), (95, -1005),
        (96, -1005), (97, -1004), (98, -1206),
    ])
    func mapsListedCodes(curlCode: Int32, expected: Int) {
        #expect(CurlErrorMapping.urlErrorCode(curlCode: curlCode).rawValue == expected)
    }

    @Test(arguments: [Int32(2), 4, 9, 22, 43, 48, 81, 93, 99, 1000, -5])
    func mapsUnlistedCodesToUnknown(curlCode: Int32) {
        #expect(CurlErrorMapping.urlErrorCode(curlCode: curlCode) == .unknown)
    }

    @Test(arguments: [
        (10, URLErrorCode.serverCertificateHasBadDate),
        (9, .serverCertificateNotYetValid),
        (18, .serverCertificateHasUnknownRoot),
        (19, .serverCertificateHasUnknownRoot),
        (20, .serverCertificateHasUnknownRoot),
        (21, .serverCertificateHasUnknownRoot),
        (2, .serverCertificateHasUnknownRoot),
        (62, .serverCertificateUntrusted),
        (0, .serverCertificateUntrusted),
        (23, .serverCertificateUntrusted),
    ])
    func peerVerificationFailureUsesTheVerifyResult(verifyResult: Int, expected: URLErrorCode) {
        #expect(CurlErrorMapping.urlErrorCode(curlCode: 60, sslVerifyResult: verifyResult) == expected)
    }

    @Test func verifyResultOnlyMattersForPeerVerification() {
        #expect(CurlErrorMapping.urlErrorCode(curlCode: 7, sslVerifyResult: 10) == .cannotConnectToHost)
    }

    @Test func handshakeFailureOnCertificateRequiredAlertIsClientCertificateRequired() {
        #expect(CurlErrorMapping.urlErrorCode(curlCode: 35, serverRequestedClientCertificate: true) == .clientCertificateRequired)
        #expect(CurlErrorMapping.urlErrorCode(curlCode: 35, serverRequestedClientCertificate: false) == .secureConnectionFailed)
        #expect(CurlErrorMapping.urlErrorCode(curlCode: 28, serverRequestedClientCertificate: true) == .timedOut)
    }

    @Test("connect failures: refused and unknown host are definitive; unreachable and timed-out connects or lookups are transient")
    func connectFailures() {
        typealias Failure = CurlErrorMapping.ConnectFailure
        #expect(CurlErrorMapping.connectFailure(curlCode: 7, osErrno: 111, detail: "Failed to connect") == Failure(code: .cannotConnectToHost, isTransient: false))
        #expect(CurlErrorMapping.connectFailure(curlCode: 7, osErrno: 101, detail: "") == Failure(code: .notConnectedToInternet, isTransient: true))
        #expect(CurlErrorMapping.connectFailure(curlCode: 7, osErrno: 100, detail: "") == Failure(code: .notConnectedToInternet, isTransient: true))
        #expect(CurlErrorMapping.connectFailure(curlCode: 7, osErrno: 113, detail: "") == Failure(code: .cannotConnectToHost, isTransient: true))
        #expect(CurlErrorMapping.connectFailure(curlCode: 7, osErrno: 110, detail: "") == Failure(code: .timedOut, isTransient: true))
        #expect(CurlErrorMapping.connectFailure(curlCode: 6, osErrno: 0, detail: "Could not resolve host: nowhere.invalid") == Failure(code: .cannotFindHost, isTransient: false))
        #expect(CurlErrorMapping.connectFailure(curlCode: 28, osErrno: 0, detail: "Resolving timed out after 5000 milliseconds") == Failure(code: .dnsLookupFailed, isTransient: true))
        #expect(CurlErrorMapping.connectFailure(curlCode: 28, osErrno: 0, detail: "Connection timed out after 3001 milliseconds") == Failure(code: .timedOut, isTransient: true))
        #expect(CurlErrorMapping.connectFailure(curlCode: 28, osErrno: 0, detail: "Connection timeout after 3001 ms") == Failure(code: .timedOut, isTransient: true))
        // libcurl 7.88's words for a connect that timed out (seen against a full accept queue).
        #expect(CurlErrorMapping.connectFailure(curlCode: 28, osErrno: 0, detail: "Failed to connect to 127.0.0.1 port 37237 after 300 ms: Timeout was reached") == Failure(code: .timedOut, isTransient: true))
        #expect(CurlErrorMapping.connectFailure(curlCode: 28, osErrno: 0, detail: "Operation timed out after 3001 milliseconds with 5 bytes received") == nil)
        #expect(CurlErrorMapping.connectFailure(curlCode: 56, osErrno: 104, detail: "Recv failure") == nil)
    }
}
