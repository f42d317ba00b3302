/// An `NSURLErrorDomain` error code, as URLSession reports it (`URLError.Code` on Apple
/// platforms). Ferry's task errors use the same numbers so a URLSession user needs no table.
///
/// A struct rather than an enum so that any code read back from storage round-trips, known or not.
public struct URLErrorCode: RawRepresentable, Hashable, Codable, Sendable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    public static let unknown = URLErrorCode(rawValue: -1)
    public static let backgroundSessionWasDisconnected = URLErrorCode(rawValue: -997)
    public static let cancelled = URLErrorCode(rawValue: -999)
    public static let badURL = URLErrorCode(rawValue: -1000)
    public static let timedOut = URLErrorCode(rawValue: -1001)
    public static let unsupportedURL = URLErrorCode(rawValue: -1002)
    public static let cannotFindHost = URLErrorCode(rawValue: -1003)
    public static let cannotConnectToHost = URLErrorCode(rawValue: -1004)
    public static let networkConnectionLost = URLErrorCode(rawValue: -1005)
    public static let dnsLookupFailed = URLErrorCode(rawValue: -1006)
    public static let httpTooManyRedirects = URLErrorCode(rawValue: -1007)
    public static let resourceUnavailable = URLErrorCode(rawValue: -1008)
    public static let notConnectedToInternet = URLErrorCode(rawValue: -1009)
    public static let redirectToNonExistentLocation = URLErrorCode(rawValue: -1010)
    public static let badServerResponse = URLErrorCode(rawValue: -1011)
    public static let userCancelledAuthentication = URLErrorCode(rawValue: -1012)
    public static let userAuthenticationRequired = URLErrorCode(rawValue: -1013)
    public static let zeroByteResource = URLErrorCode(rawValue: -1014)
    public static let cannotDecodeRawData = URLErrorCode(rawValue: -1015)
    public static let cannotDecodeContentData = URLErrorCode(rawValue: -1016)
    public static let cannotParseResponse = URLErrorCode(rawValue: -1017)
    public static let requestBodyStreamExhausted = URLErrorCode(rawValue: -1021)
    public static let dataLengthExceedsMaximum = URLErrorCode(rawValue: -1103)
    public static let secureConnectionFailed = URLErrorCode(rawValue: -1200)
    public static let serverCertificateHasBadDate = URLErrorCode(rawValue: -1201)
    public static let serverCertificateUntrusted = URLErrorCode(rawValue: -1202)
    public static let serverCertificateHasUnknownRoot = URLErrorCode(rawValue: -1203)
    public static let serverCertificateNotYetValid = URLErrorCode(rawValue: -1204)
    public static let clientCertificateRejected = URLErrorCode(rawValue: -1205)
    public static let clientCertificateRequired = URLErrorCode(rawValue: -1206)
    public static let cannotCreateFile = URLErrorCode(rawValue: -3000)
    public static let cannotOpenFile = URLErrorCode(rawValue: -3001)
    public static let cannotCloseFile = URLErrorCode(rawValue: -3002)
    public static let cannotWriteToFile = URLErrorCode(rawValue: -3003)
    public static let cannotRemoveFile = URLErrorCode(rawValue: -3004)
    public static let cannotMoveFile = URLErrorCode(rawValue: -3005)
}

extension URLErrorCode: CustomStringConvertible {
    public var description: String { "NSURLErrorDomain \(rawValue)" }
}
