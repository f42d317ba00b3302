extension CurlErrorMapping {
    /// A failure to reach the origin, told apart by how it failed.
    public struct ConnectFailure: Sendable, Equatable {
        public var code: URLErrorCode
        /// Plausibly transient (the network, not the origin): what `waitsForConnectivity` waits
        /// out. A refused connection or a name that does not resolve is definitive.
        public var isTransient: Bool
    }

    /// The connect-phase failure of a transfer, or nil when it failed elsewhere.
    ///
    /// - `CURLE_COULDNT_CONNECT` by the connect's `errno` (`CURLINFO_OS_ERRNO`): refused is
    ///   definitive (-1004); an unreachable or down network (-1009), an unreachable host (-1004)
    ///   and a connect the kernel timed out (-1001) are transient.
    /// - `CURLE_OPERATION_TIMEDOUT` while resolving (-1006) or connecting (-1001): transient.
    /// - `CURLE_COULDNT_RESOLVE_HOST` (-1003): definitive. libcurl's resolver does not tell a name
    ///   that does not exist from a DNS server failing for now, so both are taken as unknown.
    public static func connectFailure(curlCode: Int32, osErrno: Int, detail: String) -> ConnectFailure? {
        switch curlCode {
        case couldntConnectCode:
            switch osErrno {
            case errnoNetworkDown, errnoNetworkUnreachable: return ConnectFailure(code: .notConnectedToInternet, isTransient: true)
            case errnoHostUnreachable: return ConnectFailure(code: .cannotConnectToHost, isTransient: true)
            case errnoTimedOut: return ConnectFailure(code: .timedOut, isTransient: true)
            default: return ConnectFailure(code: .cannotConnectToHost, isTransient: false)
            }
        case couldntResolveHostCode:
            return ConnectFailure(code: .cannotFindHost, isTransient: false)
        case operationTimedOutCode:
            // multi.c names the phase the timeout struck in ("Connection timed out after",
            // "Connection timeout after"); libcurl 7.88's connect filters say "Failed to connect
            // to HOST port N after T ms: Timeout was reached" instead.
            if detail.hasPrefix("Resolving timed out") { return ConnectFailure(code: .dnsLookupFailed, isTransient: true) }
            if detail.hasPrefix("Connection time") || detail.hasPrefix("Failed to connect to") {
                return ConnectFailure(code: .timedOut, isTransient: true)
            }
            return nil
        default:
            return nil
        }
    }

    private static let couldntResolveHostCode: Int32 = 6   // CURLE_COULDNT_RESOLVE_HOST
    private static let couldntConnectCode: Int32 = 7       // CURLE_COULDNT_CONNECT
    private static let operationTimedOutCode: Int32 = 28   // CURLE_OPERATION_TIMEDOUT
    // Linux errno values (asm-generic/errno.h); FerryCore imports no C.
    private static let errnoNetworkDown = 100              // ENETDOWN
    private static let errnoNetworkUnreachable = 101       // ENETUNREACH
    private static let errnoTimedOut = 110                 // ETIMEDOUT
    private static let errnoHostUnreachable = 113          // EHOSTUNREACH
}
