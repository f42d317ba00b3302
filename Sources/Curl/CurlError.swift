import CCurl

/// A failed libcurl call. The one place where `CURLcode`, `CURLMcode` and `CURLUcode` become Swift errors.
public struct CurlError: Error, CustomStringConvertible, Sendable {
    public enum Source: Sendable {
        case easy
        case multi
        case url
    }

    public let source: Source
    /// The raw `CURLcode` / `CURLMcode` / `CURLUcode` value.
    public let code: Int32
    public let message: String

    public var description: String {
        "curl \(source) error \(code): \(message)"
    }

    static func check(_ code: CURLcode) throws {
        guard code != CURLE_OK else { return }
        throw CurlError(source: .easy, code: Int32(code.rawValue), message: String(cString: curl_easy_strerror(code)))
    }

    static func check(_ code: CURLMcode) throws {
        guard code != CURLM_OK else { return }
        throw CurlError(source: .multi, code: Int32(code.rawValue), message: String(cString: curl_multi_strerror(code)))
    }

    static func check(_ code: CURLUcode) throws {
        guard code != CURLUE_OK else { return }
        throw CurlError(source: .url, code: Int32(code.rawValue), message: String(cString: curl_url_strerror(code)))
    }
}

/// The text libcurl gives for a `CURLcode`, for logs and error details.
public func curlDescription(of code: Int32) -> String {
    String(cString: curl_easy_strerror(CURLcode(UInt32(bitPattern: code))))
}
