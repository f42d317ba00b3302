import CCurl

/// libcurl's process-wide initialisation, done once before the first handle exists.
///
/// `curl_global_init` is not thread-safe, so it runs inside a `static let` (which Swift
/// initialises exactly once, thread-safely) rather than from whichever worker comes first.
enum CurlGlobal {
    private static let initialised: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    static func ensureInitialised() throws {
        try CurlError.check(initialised)
    }
}

/// The version of the libcurl Ferry is linked against, e.g. "libcurl/7.88.1 OpenSSL/3.0.19 …".
public var curlVersionDescription: String {
    String(cString: curl_version())
}
