import Foundation
import Testing

@testable import FerryCore

@Suite("URLErrorCode and TransferError")
struct URLErrorCodeTests {
    @Test(arguments: [
        (URLErrorCode.unknown, -1), (.backgroundSessionWasDisconnected, -997), (.cancelled, -999), (.badURL, -1000),
        (.timedOut, -1001), (.unsupportedURL, -1002), (.cannotFindHost, -1003), (.cannotConnectToHost, -1004),
        (.networkConnectionLost, -1005), (.dnsLookupFailed, -1006), (.httpTooManyRedirects, -1007),
        (.resourceUnavailable, -1008), (.notConnectedToInternet, -1009), (.redirectToNonExistentLocation, -1010),
        (.badServerResponse, -1011), (.userCancelledAuthentication, -1012), (.userAuthenticationRequired, -1013),
        (.zeroByteResource, -1014), (.cannotDecodeRawData, -1015), (.cannotDecodeContentData, -1016),
        (.cannotParseResponse, -1017), (.requestBodyStreamExhausted, -1021), (.dataLengthExceedsMaximum, -1103),
        (.secureConnectionFailed, -1200), (.serverCertificateHasBadDate, -1201), (.serverCertificateUntrusted, -1202),
        (.serverCertificateHasUnknownRoot, -1203), (.serverCertificateNotYetValid, -1204),
        (.clientCertificateRejected, -1205), (.clientCertificateRequired, -1206), (.cannotCreateFile, -3000),
        (.cannotOpenFile, -3001), (.cannotCloseFile, -3002), (.cannotWriteToFile, -3003), (.cannotRemoveFile, -3004),
        (.cannotMoveFile, -3005),
    ])
    func hasNSURLErrorDomainValue(code: URLErrorCode, value: Int) {
        #expect(code.rawValue == value)
    }

    @Test(arguments: [
        (URLErrorCode.cancelled, "cancelled"),
        (.timedOut, "The request timed out."),
        (.cannotFindHost, "A server with the specified hostname could not be found."),
        (.cannotConnectToHost, "Could not connect to the server."),
        (.networkConnectionLost, "The network connection was lost."),
        (.httpTooManyRedirects, "too many HTTP redirects"),
        (.unsupportedURL, "unsupported URL"),
        (.badURL, "bad URL"),
        (.notConnectedToInternet, "The Internet connection appears to be offline."),
        (.badServerResponse, "There was a bad response from the server."),
        (.cannotParseResponse, "cannot parse response"),
        (.dataLengthExceedsMaximum, "resource exceeds maximum size"),
        (.secureConnectionFailed, "An SSL error has occurred and a secure connection to the server cannot be made."),
        (.serverCertificateUntrusted, "The certificate for this server is invalid."),
        (.cannotWriteToFile, "cannot write to file"),
        (.backgroundSessionWasDisconnected, "Lost connection to background transfer service"),
        (.unknown, "unknown error"),
        (.userCancelledAuthentication, "The operation couldn’t be completed. (NSURLErrorDomain error -1012.)"),
    ])
    func describesLikeApple(code: URLErrorCode, text: String) {
        #expect(code.localizedDescription == text)
    }

    @Test func everyNamedCodeHasADescription() {
        let named: [URLErrorCode] = [
            .cancelled, .badURL, .timedOut, .unsupportedURL, .cannotFindHost, .cannotConnectToHost,
            .networkConnectionLost, .httpTooManyRedirects, .secureConnectionFailed, .serverCertificateHasBadDate,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired, .cannotCreateFile, .cannotOpenFile, .cannotCloseFile, .cannotRemoveFile,
            .cannotMoveFile, .zeroByteResource, .cannotDecodeRawData, .cannotDecodeContentData,
            .requestBodyStreamExhausted, .resourceUnavailable, .dnsLookupFailed, .redirectToNonExistentLocation,
        ]
        for code in named {
            #expect(!code.localizedDescription.contains("couldn’t be completed"), "\(code)")
        }
    }

    @Test func certificateErrorsNameTheHostLikeApple() {
        #expect(URLErrorCode.serverCertificateUntrusted.localizedDescription(host: "example.com") ==
            "The certificate for this server is invalid. You might be connecting to a server that is pretending to be “example.com” which could put your confidential information at risk.")
        #expect(URLErrorCode.clientCertificateRequired.localizedDescription(host: "our.server.here") ==
            "The server “our.server.here” requires a client certificate.")
        #expect(URLErrorCode.timedOut.localizedDescription(host: "example.com") == "The request timed out.")
    }

    @Test func unknownCodesGetAppleGenericText() {
        #expect(URLErrorCode(rawValue: -12345).localizedDescription ==
            "The operation couldn’t be completed. (NSURLErrorDomain error -12345.)")
    }

    @Test func transferErrorEncodesURLSessionFields() throws {
        let error = TransferError(
            code: .cannotConnectToHost,
            failingURL: "http://127.0.0.1:8080/file",
            reason: "refused by policy: 127.0.0.1 is loopback and not in FERRY_ALLOW_NETWORKS"
        )
        #expect(error.domain == "NSURLErrorDomain")
        #expect(error.code == -1004)
        #expect(error.urlErrorCode == .cannotConnectToHost)
        #expect(error.localizedDescription == "Could not connect to the server.")

        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(error), as: UTF8.self)
        #expect(json == #"{"code":-1004,"domain":"NSURLErrorDomain","failingURL":"http:\/\/127.0.0.1:8080\/file","localizedDescription":"Could not connect to the server.","reason":"refused by policy: 127.0.0.1 is loopback and not in FERRY_ALLOW_NETWORKS"}"#)
        #expect(try JSONDecoder().decode(TransferError.self, from: Data(json.utf8)) == error)
    }

    @Test func transferErrorUsesTheFailingHostForCertificateErrors() {
        let error = TransferError(code: .serverCertificateHasBadDate, failingURL: "https://expired.example/x", reason: nil, resumeData: "frd1.a.b")
        #expect(error.localizedDescription.contains("“expired.example”"))
        #expect(error.localizedDescription.hasPrefix("The certificate for this server has expired."))
        #expect(error.resumeData == "frd1.a.b")
    }

    @Test func codeEncodesAsABareNumber() throws {
        let json = String(decoding: try JSONEncoder().encode([URLErrorCode.timedOut]), as: UTF8.self)
        #expect(json == "[-1001]")
    }
}
