import CCurl

/// What curl knows about the transfer it just ran (or is running).
extension CurlEasy {
    public var responseCode: Int { long(CURLINFO_RESPONSE_CODE) }
    /// The proxy's status answering this transfer's `CONNECT`; 0 when no tunnel was opened (none
    /// needed, or a connection with its tunnel reused). Set as soon as the status line is read.
    public var httpConnectCode: Int { long(CURLINFO_HTTP_CONNECTCODE) }
    public var effectiveURL: String? { string(CURLINFO_EFFECTIVE_URL) }
    public var contentType: String? { string(CURLINFO_CONTENT_TYPE) }
    /// The address of the peer of the last connection used (empty until connected).
    public var primaryIP: String? { string(CURLINFO_PRIMARY_IP) }
    public var primaryPort: Int { long(CURLINFO_PRIMARY_PORT) }
    public var localIP: String? { string(CURLINFO_LOCAL_IP) }
    public var localPort: Int { long(CURLINFO_LOCAL_PORT) }
    /// How many new connections the transfer made; 0 means it reused one.
    public var newConnectionCount: Int { long(CURLINFO_NUM_CONNECTS) }
    public var sslVerifyResult: Int { long(CURLINFO_SSL_VERIFYRESULT) }
    /// The `errno` of the last failed connect (`CURLINFO_OS_ERRNO`): refused and unreachable differ.
    public var osErrno: Int { long(CURLINFO_OS_ERRNO) }
    public var downloadedBytes: Int64 { offset(CURLINFO_SIZE_DOWNLOAD_T) }
    public var uploadedBytes: Int64 { offset(CURLINFO_SIZE_UPLOAD_T) }
    public var headerBytes: Int { long(CURLINFO_HEADER_SIZE) }
    public var requestBytes: Int { long(CURLINFO_REQUEST_SIZE) }
    /// -1 when the response did not say.
    public var contentLengthDownload: Int64 { offset(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T) }

    /// The HTTP version used, as URLSession names it in metrics ("http/1.1", "h2").
    public var networkProtocolName: String? {
        switch long(CURLINFO_HTTP_VERSION) {
        case CURL_HTTP_VERSION_1_0: "http/1.0"
        case CURL_HTTP_VERSION_1_1: "http/1.1"
        case CURL_HTTP_VERSION_2_0: "h2"
        case CURL_HTTP_VERSION_3: "h3"
        default: nil
        }
    }

    /// The phases of the transfer, each in microseconds since it started.
    public var timings: CurlTimings {
        CurlTimings(
            nameLookup: offset(CURLINFO_NAMELOOKUP_TIME_T),
            connect: offset(CURLINFO_CONNECT_TIME_T),
            appConnect: offset(CURLINFO_APPCONNECT_TIME_T),
            preTransfer: offset(CURLINFO_PRETRANSFER_TIME_T),
            startTransfer: offset(CURLINFO_STARTTRANSFER_TIME_T),
            total: offset(CURLINFO_TOTAL_TIME_T),
            redirect: offset(CURLINFO_REDIRECT_TIME_T)
        )
    }

    /// The server's certificate chain as PEM, leaf first, when `.certInfo` was enabled.
    public var certificateChainPEM: [String] {
        var pointer: UnsafeMutableRawPointer?
        guard ferry_curl_easy_getinfo_pointer(handle, CURLINFO_CERTINFO, &pointer) == CURLE_OK,
              let info = pointer?.assumingMemoryBound(to: curl_certinfo.self).pointee,
              let certificates = info.certinfo
        else { return [] }
        var chain: [String] = []
        for index in 0..<Int(info.num_of_certs) {
            var entry = certificates[index]
            while let node = entry {
                if let data = node.pointee.data {
                    let field = String(cString: data)
                    if field.hasPrefix("Cert:") { chain.append(String(field.dropFirst(5))) }
                }
                entry = node.pointee.next
            }
        }
        return chain
    }

    private func long(_ info: CURLINFO) -> Int {
        var value = 0
        return ferry_curl_easy_getinfo_long(handle, info, &value) == CURLE_OK ? value : 0
    }

    private func offset(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        return ferry_curl_easy_getinfo_off_t(handle, info, &value) == CURLE_OK ? Int64(value) : 0
    }

    private func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard ferry_curl_easy_getinfo_string(handle, info, &value) == CURLE_OK, let value else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}

/// Microseconds from the start of a transfer to the end of each phase (0: the phase did not happen).
public struct CurlTimings: Sendable, Equatable {
    public var nameLookup: Int64
    public var connect: Int64
    public var appConnect: Int64
    public var preTransfer: Int64
    public var startTransfer: Int64
    public var total: Int64
    public var redirect: Int64
}
