import CCurl

/// One libcurl easy handle: the options and callbacks of one transfer.
///
/// Not `Sendable`: a handle belongs to the worker thread that drives it. Its callbacks run on
/// that thread, inside `CurlMulti.perform()`, and are forwarded to `delegate`.
public final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    /// curl writes a human-readable detail here when a transfer fails.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// curl keeps only pointers to lists, so they live as long as the option is set.
    private var lists: [Int: CurlHeaderList] = [:]

    /// The connection cache this handle uses instead of its multi handle's, if any. Held so the
    /// share outlives the handle: it is released after `deinit` has cleaned the handle up.
    private var share: CurlShare?

    /// Receives the callbacks. Weak: the delegate normally owns the handle.
    public weak var delegate: (any CurlTransferDelegate)?

    public init() throws {
        try CurlGlobal.ensureInitialised()
        guard let handle = curl_easy_init() else {
            throw CurlError(source: .easy, code: Int32(CURLE_FAILED_INIT.rawValue), message: "curl_easy_init failed")
        }
        self.handle = handle
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try installCallbacks()
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Clears every option (keeping connections, DNS and TLS session caches) so the handle can
    /// serve the next request, e.g. the next hop of a redirect chain.
    public func reset() throws {
        curl_easy_reset(handle)
        lists.removeAll()
        errorBuffer[0] = 0
        try installCallbacks()
        if let share { try use(share) }
    }

    /// Takes connections from `share`'s cache, and leaves them there, instead of the multi
    /// handle's. Only while the handle is not in a multi handle, which picks the cache when the
    /// handle is added.
    public func use(_ share: CurlShare) throws {
        try CurlError.check(ferry_curl_easy_setopt_share(handle, share.owner))
        self.share = share
    }

    /// curl's detail message for the last failure, if it wrote one.
    public var lastErrorDetail: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    // MARK: Options

    public func set(_ option: CurlStringOption, _ value: String) throws {
        try CurlError.check(ferry_curl_easy_setopt_string(handle, option.raw, value))
    }

    public func set(_ option: CurlLongOption, _ value: Int) throws {
        try CurlError.check(ferry_curl_easy_setopt_long(handle, option.raw, value))
    }

    public func set(_ option: CurlLongOption, _ value: Bool) throws {
        try set(option, value ? 1 : 0)
    }

    public func set(_ option: CurlOffsetOption, _ value: Int64) throws {
        try CurlError.check(ferry_curl_easy_setopt_off_t(handle, option.raw, curl_off_t(value)))
    }

    public func set(_ option: CurlListOption, _ lines: [String]) throws {
        let list = CurlHeaderList(lines)
        try CurlError.check(ferry_curl_easy_setopt_pointer(handle, option.raw, UnsafeMutableRawPointer(list.pointer)))
        lists[Int(option.raw.rawValue)] = list
    }

    public func set(_ option: CurlBlobOption, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { buffer in
            var blob = curl_blob(
                data: UnsafeMutableRawPointer(mutating: buffer.baseAddress),
                len: buffer.count,
                flags: UInt32(CURL_BLOB_COPY)
            )
            try CurlError.check(ferry_curl_easy_setopt_blob(handle, option.raw, &blob))
        }
    }

    /// Pauses or resumes a transfer that a callback paused. Only from the thread that drives the handle.
    public func unpause() throws {
        try CurlError.check(curl_easy_pause(handle, CURLPAUSE_CONT))
    }

    private func installCallbacks() throws {
        let me = Unmanaged.passUnretained(self).toOpaque()
        try CurlError.check(ferry_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        try CurlError.check(ferry_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        try CurlError.check(ferry_curl_easy_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, curlWriteTrampoline))
        try CurlError.check(ferry_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, me))
        try CurlError.check(ferry_curl_easy_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, curlHeaderTrampoline))
        try CurlError.check(ferry_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, me))
        try CurlError.check(ferry_curl_easy_setopt_read_function(handle, CURLOPT_READFUNCTION, curlReadTrampoline))
        try CurlError.check(ferry_curl_easy_setopt_pointer(handle, CURLOPT_READDATA, me))
        try CurlError.check(ferry_curl_easy_setopt_seek_function(handle, CURLOPT_SEEKFUNCTION, curlSeekTrampoline))
        try CurlError.check(ferry_curl_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, me))
        try CurlError.check(ferry_curl_easy_setopt_xferinfo_function(handle, CURLOPT_XFERINFOFUNCTION, curlProgressTrampoline))
        try CurlError.check(ferry_curl_easy_setopt_pointer(handle, CURLOPT_XFERINFODATA, me))
        try CurlError.check(ferry_curl_easy_setopt_long(handle, CURLOPT_NOPROGRESS, 0))
        try CurlError.check(ferry_curl_easy_setopt_opensocket_function(handle, CURLOPT_OPENSOCKETFUNCTION, curlOpenSocketTrampoline))
        try CurlError.check(ferry_curl_easy_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, me))
    }
}
