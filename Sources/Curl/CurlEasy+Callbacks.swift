import CCurl

#if canImport(Glibc)
import Glibc
#endif

// The C callbacks curl calls. Each finds its `CurlEasy` through the user-data pointer
// (unretained: the handle outlives every callback it receives) and forwards to the delegate.

private func easy(_ pointer: UnsafeMutableRawPointer?) -> CurlEasy? {
    guard let pointer else { return nil }
    return Unmanaged<CurlEasy>.fromOpaque(pointer).takeUnretainedValue()
}

let curlWriteTrampoline: curl_write_callback = { data, size, count, userData in
    let length = size * count
    guard let easy = easy(userData), let delegate = easy.delegate else { return length }
    let bytes = UnsafeRawBufferPointer(start: data, count: length)
    switch delegate.curlEasy(easy, didReceiveBody: bytes) {
    case .consumed: return length
    case .pause: return Int(CURL_WRITEFUNC_PAUSE)
    case .abort: return 0
    }
}

let curlHeaderTrampoline: curl_write_callback = { data, size, count, userData in
    let length = size * count
    guard let easy = easy(userData), let delegate = easy.delegate else { return length }
    let line = UnsafeRawBufferPointer(start: data, count: length)
    return delegate.curlEasy(easy, didReceiveHeaderLine: line) ? length : 0
}

let curlReadTrampoline: curl_read_callback = { data, size, count, userData in
    guard let easy = easy(userData), let delegate = easy.delegate else { return 0 }
    let buffer = UnsafeMutableRawBufferPointer(start: data, count: size * count)
    switch delegate.curlEasy(easy, readBodyInto: buffer) {
    case .bytes(let written): return written
    case .pause: return Int(CURL_READFUNC_PAUSE)
    case .abort: return Int(CURL_READFUNC_ABORT)
    }
}

let curlSeekTrampoline: curl_seek_callback = { userData, offset, origin in
    guard origin == SEEK_SET, let easy = easy(userData), let delegate = easy.delegate else {
        return CURL_SEEKFUNC_CANTSEEK
    }
    return delegate.curlEasy(easy, seekBodyTo: Int64(offset)) ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_CANTSEEK
}

let curlProgressTrampoline: curl_xferinfo_callback = { userData, downloadTotal, downloaded, uploadTotal, uploaded in
    guard let easy = easy(userData), let delegate = easy.delegate else { return 0 }
    let progress = CurlProgress(
        downloadTotal: Int64(downloadTotal),
        downloaded: Int64(downloaded),
        uploadTotal: Int64(uploadTotal),
        uploaded: Int64(uploaded)
    )
    // Non-zero aborts the transfer with CURLE_ABORTED_BY_CALLBACK.
    return delegate.curlEasy(easy, progress: progress) ? 0 : 1
}

let curlOpenSocketTrampoline: curl_opensocket_callback = { userData, purpose, address in
    // Fails closed: the delegate is the address guard, so no delegate (a handle whose owner is
    // gone, or one set up without one) means no connection, never an unchecked one.
    guard let address, let easy = easy(userData), let delegate = easy.delegate,
          let peer = CurlSocketAddress(address), delegate.curlEasy(easy, mayConnectTo: peer)
    else { return CURL_SOCKET_BAD }
    let family = address.pointee.family
    // With an open-socket callback installed, creating the socket is ours to do.
    return socket(family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
}
