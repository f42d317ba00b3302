import Curl
import FerryCore
import Foundation

/// Setting up each HTTP exchange of a transfer, and deciding what follows when one ends.
extension Transfer {
    /// Sets the handle up for `request`. Throws only on a curl setup failure (a bug, not input).
    func configureExchange() throws {
        try easy.reset()
        heads = ResponseHeadAccumulator()
        role = .undecided
        hopStarted = Date()
        failure = nil
        refusal = nil
        restartsWithoutRange = false
        let configuration = job.claim.configuration

        try easy.set(.url, request.url)
        // Only HTTP(S), never a redirect that curl follows by itself: every hop is decided here.
        try easy.set(.protocols, "http,https")
        try easy.set(.redirectProtocols, "http,https")
        try easy.set(.followLocation, false)
        try easy.set(.maxRedirects, 0)
        try configureProxy(configuration)
        try easy.set(.sslVersion, CurlTLSVersion.optionValue(
            minimum: configuration.tlsMinimumSupportedProtocolVersion.curlVersion,
            maximum: configuration.tlsMaximumSupportedProtocolVersion.curlVersion
        ))
        try configureTimeouts()
        try configureMethodAndBody()
        try easy.set(.httpHeader, headerLines())
        if job.claim.kind == .download {
            // Fewer, larger writes; and no content coding, so byte ranges stay meaningful for resume.
            try easy.set(.bufferSize, 512 * 1024)
        } else if request.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            try easy.set(.acceptEncoding, "")
        }
        try easy.set(.tcpKeepAlive, true)
    }

    private func configureProxy(_ configuration: SessionConfiguration) throws {
        let scheme = request.url.lowercased().hasPrefix("https:") ? "https" : "http"
        guard let (endpoint, isSOCKS) = configuration.connectionProxyDictionary?.proxy(forScheme: scheme) else {
            // "" disables every proxy, including ones named by the process environment.
            try easy.set(.proxy, "")
            usesProxy = false
            return
        }
        let host = endpoint.host.contains(":") && !endpoint.host.hasPrefix("[") ? "[\(endpoint.host)]" : endpoint.host
        try easy.set(.proxy, "\(isSOCKS ? "socks5h" : "http")://\(host):\(endpoint.port)")
        usesProxy = true
    }

    private func configureTimeouts() throws {
        // timeoutIntervalForRequest: connecting may take this long, and so may any stretch without
        // data afterwards. The idle part is checked in the progress callback: curl's own
        // low-speed check averages over several seconds and would fire late.
        try easy.set(.connectTimeoutMilliseconds, Int(job.requestTimeout * 1000))
        lastActivity = .now
        // timeoutIntervalForResource: the whole task, counted from its first start.
        let remaining = job.claim.resourceDeadline.timeIntervalSinceNow
        try easy.set(.timeoutMilliseconds, max(1, Int(remaining * 1000)))
    }

    private func configureMethodAndBody() throws {
        let method = request.httpMethod.uppercased()
        if sendsBody, let uploadBody {
            _ = uploadBody.seek(to: 0)
            try easy.set(.upload, true)
            try easy.set(.inFileSize, uploadBody.length)
            try easy.set(.customRequest, request.httpMethod)
        } else if method == "GET" {
            try easy.set(.httpGet, true)
        } else if method == "HEAD" {
            try easy.set(.noBody, true)
        } else if ["POST", "PUT", "PATCH"].contains(method) {
            // A body-carrying method without a body still says Content-Length: 0.
            try easy.set(.upload, true)
            try easy.set(.inFileSize, 0)
            try easy.set(.customRequest, request.httpMethod)
        } else {
            try easy.set(.customRequest, request.httpMethod)
        }
    }

    /// The session's additional headers under the request's own, plus what Ferry adds.
    private func headerLines() -> [String] {
        let configuration = job.claim.configuration
        var headers = HTTPHeaderRules.merge(configuration.httpAdditionalHeaders, under: request.allHTTPHeaderFields)
        if !headers.keys.contains(where: { $0.lowercased() == "user-agent" }) {
            headers["User-Agent"] = job.userAgent
        }
        var lines = headers.sorted { $0.key < $1.key }.map { name, value in
            // curl drops "Name:" with an empty value; "Name;" sends it empty.
            value.isEmpty ? "\(name);" : "\(name): \(value)"
        }
        // URLSession does not send Expect: 100-continue; it costs a round trip (or a second).
        lines.append("Expect:")
        if let (offset, validator) = resumeRequest {
            lines.append("Range: bytes=\(offset)-")
            lines.append("If-Range: \(validator.ifRangeValue)")
        }
        return lines
    }

    /// curl finished the current exchange with `result`. Returns how the transfer ends, or nil
    /// when the next exchange has been set up (a redirect, or a resume retried without Range).
    func exchangeFinished(result: Int32) -> TransferEnd? {
        if sendsBody { bytesSent = max(bytesSent, easy.uploadedBytes) }
        let exchangeResponse = heads.completed.map { HTTPResponseSnapshot(url: request.url, head: $0) }
        metrics.append(easy.transactionMetrics(request: request, response: exchangeResponse, started: hopStarted, isProxyConnection: usesProxy))
        if let stopRequest { return stopRequest }
        if restartsWithoutRange {
            resumeRequest = nil
            validator = nil
            do {
                try file?.truncateToZero()
                bytesReceived = 0
                try configureExchange()
                return nil
            } catch {
                return .failed(TransferError(code: .cannotWriteToFile, failingURL: request.url))
            }
        }
        guard result == 0 else { return .failed(error(for: result)) }
        switch role {
        case .final, .discard:
            return .finished
        case .undecided:
            return .failed(TransferError(code: .badServerResponse, failingURL: request.url))
        case .redirect(let location):
            return followRedirect(to: location)
        }
    }

    private func followRedirect(to location: String) -> TransferEnd? {
        guard redirectCount < RedirectPolicy.maximumRedirects else {
            return .failed(TransferError(code: .httpTooManyRedirects, failingURL: request.url))
        }
        let status = heads.completed?.statusCode ?? 302
        let previous = try? CurlURL(parsing: request.url)
        let next = try? CurlURL(parsing: location)
        let originChanged = previous?.scheme != next?.scheme || previous?.host != next?.host || previous?.port != next?.port
        let redirect = RedirectPolicy.nextRequest(after: request, statusCode: status, location: location, originChanged: originChanged)
        var redirectResponse: JSONValue = .null
        if let head = heads.completed {
            redirectResponse = (try? JSONValue(encoding: HTTPResponseSnapshot(url: request.url, head: head))) ?? .null
        }
        emit(.taskWillPerformHTTPRedirection, [
            "response": redirectResponse,
            "newRequest": (try? JSONValue(encoding: redirect.request)) ?? .null,
        ])
        redirectCount += 1
        request = redirect.request
        sendsBody = sendsBody && redirect.keepsBody
        currentRequestReported = false
        do {
            try file?.truncateToZero()
            bytesReceived = 0
            try configureExchange()
            return nil
        } catch {
            return .failed(TransferError(code: .cannotWriteToFile, failingURL: request.url))
        }
    }

    /// The URLSession error for a failed exchange: ours when we caused it, else curl's, mapped.
    private func error(for result: Int32) -> TransferError {
        if let failure { return failure }
        if let refusal { return TransferError(code: .cannotConnectToHost, failingURL: request.url, reason: refusal) }
        let code = CurlErrorMapping.urlErrorCode(curlCode: result, sslVerifyResult: easy.sslVerifyResult)
        var reason = easy.lastErrorDetail
        if code == .timedOut, job.claim.resourceDeadline.timeIntervalSinceNow <= 0 {
            reason = "timeoutIntervalForResource elapsed"
        }
        return TransferError(code: code, failingURL: request.url, reason: reason)
    }
}

extension TLSProtocolVersion {
    var curlVersion: CurlTLSVersion {
        switch self {
        case .TLSv10: .tls1_0
        case .TLSv11: .tls1_1
        case .TLSv12: .tls1_2
        case .TLSv13: .tls1_3
        }
    }
}
