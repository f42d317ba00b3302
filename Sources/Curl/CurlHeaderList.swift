import CCurl

/// An owned `curl_slist`. curl keeps only the pointer, so the list must outlive the transfer
/// that uses it: `CurlEasy` holds it until the option is replaced or the handle is reset.
final class CurlHeaderList {
    private(set) var pointer: UnsafeMutablePointer<curl_slist>?

    init(_ lines: [String]) {
        for line in lines {
            // curl_slist_append copies the string.
            pointer = curl_slist_append(pointer, line)
        }
    }

    deinit {
        curl_slist_free_all(pointer)
    }
}
