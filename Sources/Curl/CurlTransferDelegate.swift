/// What a transfer's owner hears from curl, on the thread that drives the handle.
///
/// Every method has a default, so an owner implements only what it needs, except the address
/// guard (`mayConnectTo`): an owner must decide where its transfers connect, a default that
/// allows everything would be a guard that fails open.
public protocol CurlTransferDelegate: AnyObject {
    /// One raw header line with its CRLF, for every response of the transfer (interim `100`,
    /// the final one, and the blank line that ends each block). Return false to abort.
    func curlEasy(_ easy: CurlEasy, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> Bool

    /// A piece of the response body, already content-decoded when decoding was asked for.
    func curlEasy(_ easy: CurlEasy, didReceiveBody bytes: UnsafeRawBufferPointer) -> CurlBodyDisposition

    /// Fill `buffer` with the next piece of the request body.
    func curlEasy(_ easy: CurlEasy, readBodyInto buffer: UnsafeMutableRawBufferPointer) -> CurlReadResult

    /// Rewind the request body to `offset` (curl asks when it must send the body again,
    /// after a redirect or an authentication round). Return false when that is impossible.
    func curlEasy(_ easy: CurlEasy, seekBodyTo offset: Int64) -> Bool

    /// Called at least once a second while the transfer runs. Return false to abort it.
    func curlEasy(_ easy: CurlEasy, progress: CurlProgress) -> Bool

    /// Asked before curl connects to each resolved address, for every connection of the
    /// transfer (including proxies). Return false to refuse: curl then never sends a SYN there.
    func curlEasy(_ easy: CurlEasy, mayConnectTo address: CurlSocketAddress) -> Bool
}

public enum CurlBodyDisposition: Sendable {
    /// The bytes were taken.
    case consumed
    /// Stop delivering until `CurlEasy.unpause()`; curl will deliver the same bytes again.
    case pause
    /// Fail the transfer with `CURLE_WRITE_ERROR`.
    case abort
}

public enum CurlReadResult: Sendable {
    /// This many bytes were written into the buffer; 0 ends the body.
    case bytes(Int)
    /// No bytes yet; wait until `CurlEasy.unpause()`.
    case pause
    /// Fail the transfer with `CURLE_ABORTED_BY_CALLBACK`.
    case abort
}

public struct CurlProgress: Sendable {
    public var downloadTotal: Int64
    public var downloaded: Int64
    public var uploadTotal: Int64
    public var uploaded: Int64
}

extension CurlTransferDelegate {
    public func curlEasy(_ easy: CurlEasy, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> Bool { true }
    public func curlEasy(_ easy: CurlEasy, didReceiveBody bytes: UnsafeRawBufferPointer) -> CurlBodyDisposition { .consumed }
    public func curlEasy(_ easy: CurlEasy, readBodyInto buffer: UnsafeMutableRawBufferPointer) -> CurlReadResult { .bytes(0) }
    public func curlEasy(_ easy: CurlEasy, seekBodyTo offset: Int64) -> Bool { offset == 0 }
    public func curlEasy(_ easy: CurlEasy, progress: CurlProgress) -> Bool { true }
}
