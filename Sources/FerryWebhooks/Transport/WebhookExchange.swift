import Curl
import FerryCore
import Foundation

/// One webhook POST on the transport thread: feeds the body to curl, keeps the response's
/// status, `Retry-After` and the first bytes of its body, and checks every address curl is
/// about to connect to against the address policy.
final class WebhookExchange: CurlTransferDelegate {
    let easy: CurlEasy
    let request: WebhookHTTPRequest
    let reply: @Sendable (WebhookHTTPResult) -> Void
    private let policy: AddressPolicy
    private let maximumResponseBytes: Int
    private let startedAt = ContinuousClock.now

    private var bodyOffset = 0
    private var responseBody: [UInt8] = []
    private var isTruncated = false
    private var retryAfter: String?
    private var headerBytes = 0
    private var refusal: String?

    /// The one response field the exchange keeps, lowercased.
    private static let retryAfter = "retry-after"

    /// Response heads beyond this are hostile: the exchange is aborted.
    static let maximumHeaderBytes = 64 * 1024

    init(
        request: WebhookHTTPRequest, policy: AddressPolicy, userAgent: String, maximumResponseBytes: Int,
        connectTimeout: Duration, reply: @escaping @Sendable (WebhookHTTPResult) -> Void
    ) throws {
        self.easy = try CurlEasy()
        self.request = request
        self.reply = reply
        self.policy = policy
        self.maximumResponseBytes = maximumResponseBytes
        easy.delegate = self
        try easy.set(.url, request.url)
        try easy.set(.post, true)
        try easy.set(.postFieldSize, Int64(request.body.count))
        try easy.set(.httpHeader, request.headerLines)
        try easy.set(.userAgent, userAgent)
        // A 3xx is an answer like any other (a failure), never followed.
        try easy.set(.followLocation, false)
        try easy.set(.maxRedirects, 0)
        try easy.set(.protocols, "http,https")
        try easy.set(.redirectProtocols, "http,https")
        // Never a proxy from the environment.
        try easy.set(.proxy, "")
        try easy.set(.connectTimeoutMilliseconds, max(1, Int(min(connectTimeout, request.timeout).wholeMilliseconds)))
        try easy.set(.timeoutMilliseconds, max(1, Int(request.timeout.wholeMilliseconds)))
    }

    /// Turns curl's result into the answer, and hands it to whoever waits.
    func finish(curlCode: Int32) {
        let duration = ContinuousClock.now - startedAt
        var result = WebhookHTTPResult(
            statusCode: nil, retryAfter: retryAfter, body: responseBody, isBodyTruncated: isTruncated, failure: nil, duration: duration
        )
        let status = easy.responseCode
        switch curlCode {
        case CurlCode.ok:
            result.statusCode = status
        case CurlCode.writeError where isTruncated && status > 0:
            // Stopped reading on purpose once the bound was reached; the status stands.
            result.statusCode = status
        case CurlCode.operationTimedOut:
            result.failure = .timedOut(request.timeout)
        default:
            // Only when no address could be connected to (see the engine's `Transfer.error(for:)`).
            if let refusal, curlCode == CurlErrorMapping.couldntConnect {
                result.failure = .refused(reason: refusal)
            } else {
                let detail = easy.lastErrorDetail ?? curlDescription(of: curlCode)
                result.failure = .transport("curl error \(curlCode): \(detail)")
            }
        }
        reply(result)
    }

    func curlEasy(_ easy: CurlEasy, readBodyInto buffer: UnsafeMutableRawBufferPointer) -> CurlReadResult {
        let count = min(buffer.count, request.body.count - bodyOffset)
        guard count > 0 else { return .bytes(0) }
        request.body.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[bodyOffset..<(bodyOffset + count)]))
        }
        bodyOffset += count
        return .bytes(count)
    }

    func curlEasy(_ easy: CurlEasy, seekBodyTo offset: Int64) -> Bool {
        guard offset >= 0, offset <= Int64(request.body.count) else { return false }
        bodyOffset = Int(offset)
        return true
    }

    func curlEasy(_ easy: CurlEasy, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> Bool {
        headerBytes += line.count
        guard headerBytes <= Self.maximumHeaderBytes else { return false }
        // Decoded as UTF-8 (a bad byte becomes U+FFFD), the standard library's fast path: with
        // Foundation's Latin-1 decoding, reading every line of every response was 7 % of the
        // transport thread's time in a backlog's drain. Only Retry-After is kept, and it is ASCII.
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("HTTP/") {
            // A new response head (after an interim 100): forget the previous one's fields.
            retryAfter = nil
        } else if let colon = text.firstIndex(of: ":"), text[..<colon].utf8.count == Self.retryAfter.utf8.count,
                  text[..<colon].lowercased() == Self.retryAfter {
            retryAfter = text[text.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return true
    }

    func curlEasy(_ easy: CurlEasy, didReceiveBody bytes: UnsafeRawBufferPointer) -> CurlBodyDisposition {
        let room = maximumResponseBytes - responseBody.count
        guard bytes.count <= room else {
            responseBody.append(contentsOf: bytes.prefix(max(room, 0)))
            isTruncated = true
            return .abort
        }
        responseBody.append(contentsOf: bytes)
        return .consumed
    }

    func curlEasy(_ easy: CurlEasy, mayConnectTo address: CurlSocketAddress) -> Bool {
        guard let networkAddress = NetworkAddress(bytes: address.addressBytes) else {
            refusal = AddressVerdict.nonIPRefusalReason
            return false
        }
        if let reason = policy.evaluate(networkAddress).refusalReason {
            refusal = reason
            return false
        }
        return true
    }
}

/// The `CURLcode` values the exchange tells apart (libcurl's stable ABI, `curl.h`).
enum CurlCode {
    static let ok: Int32 = 0
    static let writeError: Int32 = 23
    static let operationTimedOut: Int32 = 28
}
