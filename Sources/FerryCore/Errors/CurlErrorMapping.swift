/// Turns a libcurl failure into the `NSURLErrorDomain` code URLSession would have reported.
///
/// FerryCore does not import curl, so the `CURLcode` numbers are spelled out below (values from
/// libcurl 7.88 `curl.h`; they are part of curl's stable ABI).
public enum CurlErrorMapping {
    /// - Parameters:
    ///   - curlCode: the `CURLcode` of the failed transfer.
    ///   - sslVerifyResult: `CURLINFO_SSL_VERIFYRESULT` (an OpenSSL `X509_V_ERR_*` value),
    ///     which tells certificate failures apart for `CURLE_PEER_FAILED_VERIFICATION`.
    ///   - serverRequestedClientCertificate: the TLS handshake failed on the server's
    ///     "certificate required" alert; turns a `CURLE_SSL_CONNECT_ERROR` into
    ///     `clientCertificateRequired`.
    public static func urlErrorCode(
        curlCode: Int32,
        sslVerifyResult: Int = 0,
        serverRequestedClientCertificate: Bool = false
    ) -> URLErrorCode {
        switch curlCode {
        case sslConnectError:
            return serverRequestedClientCertificate ? .clientCertificateRequired : .secureConnectionFailed
        case peerFailedVerification:
            return certificateErrorCode(sslVerifyResult: sslVerifyResult)
        default:
            return table[curlCode] ?? .unknown
        }
    }

    /// `CURLE_PEER_FAILED_VERIFICATION`, told apart by OpenSSL's verify result.
    static func certificateErrorCode(sslVerifyResult: Int) -> URLErrorCode {
        switch sslVerifyResult {
        case x509CertHasExpired:
            return .serverCertificateHasBadDate
        case x509CertNotYetValid:
            return .serverCertificateNotYetValid
        case x509UnableToGetIssuerCert, x509DepthZeroSelfSignedCert, x509SelfSignedCertInChain,
             x509UnableToGetIssuerCertLocally, x509UnableToVerifyLeafSignature:
            return .serverCertificateHasUnknownRoot
        default:
            return .serverCertificateUntrusted
        }
    }

    // CURLcode values (curl.h, libcurl 7.88).
    private static let unsupportedProtocol: Int32 = 1       // CURLE_UNSUPPORTED_PROTOCOL
    private static let urlMalformat: Int32 = 3              // CURLE_URL_MALFORMAT
    private static let couldntResolveProxy: Int32 = 5       // CURLE_COULDNT_RESOLVE_PROXY
    private static let couldntResolveHost: Int32 = 6        // CURLE_COULDNT_RESOLVE_HOST
    public static let couldntConnect: Int32 = 7             // CURLE_COULDNT_CONNECT
    private static let weirdServerReply: Int32 = 8          // CURLE_WEIRD_SERVER_REPLY
    private static let http2: Int32 = 16                    // CURLE_HTTP2
    private static let partialFile: Int32 = 18              // CURLE_PARTIAL_FILE
    private static let writeError: Int32 = 23               // CURLE_WRITE_ERROR
    private static let uploadFailed: Int32 = 25             // CURLE_UPLOAD_FAILED
    private static let readError: Int32 = 26                // CURLE_READ_ERROR
    private static let outOfMemory: Int32 = 27              // CURLE_OUT_OF_MEMORY
    private static let operationTimedOut: Int32 = 28        // CURLE_OPERATION_TIMEDOUT
    private static let rangeError: Int32 = 33               // CURLE_RANGE_ERROR
    private static let sslConnectError: Int32 = 35          // CURLE_SSL_CONNECT_ERROR
    private static let abortedByCallback: Int32 = 42        // CURLE_ABORTED_BY_CALLBACK
    private static let interfaceFailed: Int32 = 45          // CURLE_INTERFACE_FAILED
    private static let tooManyRedirects: Int32 = 47         // CURLE_TOO_MANY_REDIRECTS
    private static let gotNothing: Int32 = 52               // CURLE_GOT_NOTHING
    private static let sslEngineNotFound: Int32 = 53        // CURLE_SSL_ENGINE_NOTFOUND
    private static let sslEngineSetFailed: Int32 = 54       // CURLE_SSL_ENGINE_SETFAILED
    private static let sendError: Int32 = 55                // CURLE_SEND_ERROR
    private static let recvError: Int32 = 56                // CURLE_RECV_ERROR
    private static let sslCertProblem: Int32 = 58           // CURLE_SSL_CERTPROBLEM
    private static let sslCipher: Int32 = 59                // CURLE_SSL_CIPHER
    private static let peerFailedVerification: Int32 = 60   // CURLE_PEER_FAILED_VERIFICATION
    private static let badContentEncoding: Int32 = 61       // CURLE_BAD_CONTENT_ENCODING
    private static let filesizeExceeded: Int32 = 63         // CURLE_FILESIZE_EXCEEDED
    private static let useSSLFailed: Int32 = 64             // CURLE_USE_SSL_FAILED
    private static let sendFailRewind: Int32 = 65           // CURLE_SEND_FAIL_REWIND
    private static let sslEngineInitFailed: Int32 = 66      // CURLE_SSL_ENGINE_INITFAILED
    private static let loginDenied: Int32 = 67              // CURLE_LOGIN_DENIED
    private static let sslCACertBadFile: Int32 = 77         // CURLE_SSL_CACERT_BADFILE
    private static let sslShutdownFailed: Int32 = 80        // CURLE_SSL_SHUTDOWN_FAILED
    private static let sslCRLBadFile: Int32 = 82            // CURLE_SSL_CRL_BADFILE
    private static let sslIssuerError: Int32 = 83           // CURLE_SSL_ISSUER_ERROR
    private static let noConnectionAvailable: Int32 = 89    // CURLE_NO_CONNECTION_AVAILABLE
    private static let sslPinnedPubKeyNotMatch: Int32 = 90  // CURLE_SSL_PINNEDPUBKEYNOTMATCH
    private static let sslInvalidCertStatus: Int32 = 91     // CURLE_SSL_INVALIDCERTSTATUS
    private static let http2Stream: Int32 = 92              // CURLE_HTTP2_STREAM
    private static let authError: Int32 = 94                // CURLE_AUTH_ERROR
    private static let http3: Int32 = 95                    // CURLE_HTTP3
    private static let quicConnectError: Int32 = 96         // CURLE_QUIC_CONNECT_ERROR
    private static let proxy: Int32 = 97                    // CURLE_PROXY
    private static let sslClientCert: Int32 = 98            // CURLE_SSL_CLIENTCERT

    // OpenSSL X509_V_ERR_* values (x509_vfy.h), as reported by CURLINFO_SSL_VERIFYRESULT.
    private static let x509UnableToGetIssuerCert = 2
    private static let x509CertNotYetValid = 9
    private static let x509CertHasExpired = 10
    private static let x509DepthZeroSelfSignedCert = 18
    private static let x509SelfSignedCertInChain = 19
    private static let x509UnableToGetIssuerCertLocally = 20
    private static let x509UnableToVerifyLeafSignature = 21

    /// Every code with a fixed answer; codes missing here have no URLSession counterpart and
    /// map to `.unknown`.
    private static let table: [Int32: URLErrorCode] = [
        unsupportedProtocol: .unsupportedURL,
        urlMalformat: .badURL,
        couldntResolveProxy: .cannotFindHost,
        couldntResolveHost: .cannotFindHost,
        couldntConnect: .cannotConnectToHost,
        weirdServerReply: .cannotParseResponse,
        http2: .networkConnectionLost,
        partialFile: .networkConnectionLost,
        writeError: .cannotWriteToFile,
        uploadFailed: .networkConnectionLost,
        readError: .requestBodyStreamExhausted,
        outOfMemory: .unknown,
        operationTimedOut: .timedOut,
        rangeError: .badServerResponse,
        abortedByCallback: .cancelled,
        interfaceFailed: .cannotConnectToHost,
        tooManyRedirects: .httpTooManyRedirects,
        gotNothing: .networkConnectionLost,
        sslEngineNotFound: .secureConnectionFailed,
        sslEngineSetFailed: .secureConnectionFailed,
        sendError: .networkConnectionLost,
        recvError: .networkConnectionLost,
        sslCertProblem: .clientCertificateRejected,
        sslCipher: .secureConnectionFailed,
        badContentEncoding: .cannotDecodeContentData,
        filesizeExceeded: .dataLengthExceedsMaximum,
        useSSLFailed: .secureConnectionFailed,
        sendFailRewind: .requestBodyStreamExhausted,
        sslEngineInitFailed: .secureConnectionFailed,
        loginDenied: .userAuthenticationRequired,
        sslCACertBadFile: .secureConnectionFailed,
        sslShutdownFailed: .secureConnectionFailed,
        sslCRLBadFile: .secureConnectionFailed,
        sslIssuerError: .serverCertificateUntrusted,
        noConnectionAvailable: .cannotConnectToHost,
        sslPinnedPubKeyNotMatch: .serverCertificateUntrusted,
        sslInvalidCertStatus: .serverCertificateUntrusted,
        http2Stream: .networkConnectionLost,
        authError: .userAuthenticationRequired,
        http3: .networkConnectionLost,
        quicConnectError: .networkConnectionLost,
        proxy: .cannotConnectToHost,
        sslClientCert: .clientCertificateRequired,
    ]
}
