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
        droppedBodyBytes = 0
        isDroppedBodyCut = false
        restartsWithoutRange = false
        resumedRange = nil
        tunnelHead = nil
        exchangeStartBytes = bytesReceived
        let configuration = job.claim.configuration

        try easy.set(.url, request.url)
        // Only HTTP(S), never a redirect that curl follows by itself: every hop is decided here.
        try easy.set(.protocols, "http,https")
        try easy.set(.redirectProtocols, "http,https")
        try easy.set(.followLocation, false)
        // Set explicitly (7.88 defaults to unlimited). curl never follows a Location here, but it
        // counts the re-issue of an authentication handshake against this limit.
        try easy.set(.maxRedirects, RedirectPolicy.maximumRedirects)
        try configureProxy(configuration)
        try easy.set(.sslVersion, CurlTLSVersion.optionValue(
            minimum: configuration.tlsMinimumSupportedProtocolVersion.curlVersion,
            maximum: configuration.tlsMaximumSupportedProtocolVersion.curlVersion
        ))
        try configureTLS(configuration)
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
        try configureConnectionReuse()
        if let challengeResponse {
            try easy.set(.username, challengeResponse.user)
            try easy.set(.password, challengeResponse.password)
            try easy.set(.httpAuth, challengeResponse.scheme.curlMethods.rawValue)
        }
    }

    private func configureProxy(_ configuration: SessionConfiguration) throws {
        let scheme = request.url.lowercased().hasPrefix("https:") ? "https" : "http"
        guard let (endpoint, isSOCKS) = configuration.connectionProxyDictionary?.proxy(forScheme: scheme) else {
            // "" disables every proxy, including ones named by the process environment.
            try easy.set(.proxy, "")
            usesProxy = false
            awaitsTunnel = false
            return
        }
        let host = endpoint.host.contains(":") && !endpoint.host.hasPrefix("[") ? "[\(endpoint.host)]" : endpoint.host
        try easy.set(.proxy, "\(isSOCKS ? "socks5h" : "http")://\(host):\(endpoint.port)")
        // Unset, curl reads NO_PROXY/no_proxy from the process environment and skips the proxy
        // for the hosts it names: only the session's configuration decides.
        try easy.set(.noProxy, "")
        usesProxy = true
        // HTTPS through an HTTP proxy always tunnels. Its CONNECT answer reaches the header
        // callback (CURLOPT_SUPPRESS_CONNECT_HEADERS is not set): a 407 needs its Proxy-Authenticate.
        awaitsTunnel = !isSOCKS && scheme == "https"
        if let proxyChallengeResponse, !isSOCKS {
            try easy.set(.proxyUsername, proxyChallengeResponse.user)
            try easy.set(.proxyPassword, proxyChallengeResponse.password)
            try easy.set(.proxyAuth, proxyChallengeResponse.scheme.curlMethods.rawValue)
            try keepConnectionPrivate()
        }
    }

    /// A connection authenticated with something curl does not compare when it picks a cached
    /// connection for the next transfer (a client certificate's private key; an HTTP proxy's
    /// credentials, against the tunnel it opened) is never shared: a worker's connection cache
    /// serves every tenant, and one that sent the same certificate with any key, or the same
    /// proxy with none, would have been handed this one. It is opened fresh and closed after.
    private func keepConnectionPrivate() throws {
        try easy.set(.freshConnect, true)
        try easy.set(.forbidReuse, true)
    }

    private func configureTLS(_ configuration: SessionConfiguration) throws {
        if let certificate = delegateClientCertificate {
            try easy.set(.sslCertType, "PEM")
            try easy.set(.sslCertificate, Array(certificate.certificatePEM.utf8))
            try easy.set(.sslKeyType, "PEM")
            try easy.set(.sslKey, Array(certificate.privateKeyPEM.utf8))
            if let passphrase = certificate.passphrase { try easy.set(.keyPassword, passphrase) }
            try keepConnectionPrivate()
        } else if let certificate = configuration.tlsClientCertificatePEM, let key = configuration.tlsClientPrivateKeyPEM {
            try easy.set(.sslCertType, "PEM")
            try easy.set(.sslCertificate, Array(certificate.utf8))
            try easy.set(.sslKeyType, "PEM")
            try easy.set(.sslKey, Array(key.utf8))
            if let passphrase = configuration.tlsClientPrivateKeyPassphrase { try easy.set(.keyPassword, passphrase) }
            try keepConnectionPrivate()
        }
        if let roots = configuration.tlsTrustedRootCertificatesPEM {
            try easy.set(.caInfo, Array(roots.utf8))
        }
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

    /// The request's header lines, plus the conditional and range fields of this exchange.
    private func headerLines() -> [String] {
        var headers = RequestHeaders.effective(for: request, job: job, cookies: cookies, now: Date())
        if resumeRequest != nil {
            // A resumed exchange's Range and If-Range are Ferry's (below): the request's own would
            // go out beside them, a weak validator among them, and which Range counts is undefined.
            headers = headers.filter { !["range", "if-range"].contains($0.key.lowercased()) }
        }
        sentHeaders = headers
        // The Accept-Encoding `effective` adds (for Vary) is the one curl sends itself when the
        // request names none (CURLOPT_ACCEPT_ENCODING): not sent twice. A session's own
        // httpAdditionalHeaders value is a different field and goes out as given.
        if job.claim.kind != .download, request.value(forHTTPHeaderField: "Accept-Encoding") == nil,
           headers["Accept-Encoding"] == RequestHeaders.acceptedEncodings {
            headers["Accept-Encoding"] = nil
        }
        if redirectCount == 0, let revalidation = job.cache?.conditionalHeaders {
            for field in revalidation { headers[field.name] = field.value }
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
        if sendsBody {
            bytesSent = bodyBytesSent(curlCount: max(bytesSent, easy.uploadedBytes))
        }
        let exchangeResponse = heads.completed.map { HTTPResponseSnapshot(url: request.url, head: $0) }
        metrics.append(easy.transactionMetrics(request: request, response: exchangeResponse, started: hopStarted, isProxyConnection: usesProxy))
        if let stopRequest { return stopRequest }
        if let continuationRefusal { return .failed(continuationRefusal) }
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
        if result != 0, let tunnelHead, tunnelHead.statusCode == 407 {
            // curl ends an exchange whose CONNECT was refused with an error; the 407 is a challenge.
            return tunnelChallenged(tunnelHead, failure: error(for: result))
        }
        // A dropped body cut short by us ended the exchange on purpose: what follows is decided as usual.
        guard result == 0 || isDroppedBodyCut else { return clientCertificateRequested(error(for: result)) }
        switch role {
        case .final where response?.statusCode == 401:
            return challenged()
        case .final where response?.statusCode == 407 && usesProxy:
            return proxyChallenged()
        case .final:
            return finishResumedRange()
        case .discard:
            return .finished
        case .undecided:
            return .failed(TransferError(code: .badServerResponse, failingURL: request.url))
        case .redirect(let location):
            return followRedirect(to: location)
        }
    }

    /// How a final response ends the transfer when it appended a 206 to a partial file, held to
    /// its `Content-Range`:
    /// - the file whole: finished;
    /// - the whole range came, and it ends before the resource does (RFC 9110 lets a server send
    ///   less than was asked, and some cap every range): the next exchange asks for the rest, as
    ///   resuming from where the file ends would, so that such a server does not end every
    ///   resume with -1005 (and a background session's retries with it); nil;
    /// - the body stopped before its range did (or the rest was asked for too often): -1005, what
    ///   curl's CURLE_PARTIAL_FILE (a body short of its `Content-Length`) maps to and what
    ///   URLSession reports for a body cut short. What came is the representation's, as its range
    ///   said, so the file is kept: resume data (or a background session's retry) continues it.
    private func finishResumedRange() -> TransferEnd? {
        guard let resumedRange, let file else { return .finished }
        let end = resumedRange.end(fileLength: file.bytesWritten)
        if end == .complete { return .finished }
        if end == .shortOfTotal, rangeContinuations < Self.maximumRangeContinuations, let validator {
            rangeContinuations += 1
            resumeRequest = (file.bytesWritten, validator)
            do {
                try configureExchange()
                return nil
            } catch {
                return .failed(TransferError(code: .cannotWriteToFile, failingURL: request.url))
            }
        }
        let reason = end == .shortOfRange
            ? "the 206 response's body ended before the end of its Content-Range"
            : "the 206 response's Content-Range ends before the end of the resource"
        return .failed(TransferError(code: .networkConnectionLost, failingURL: request.url, reason: reason))
    }

    /// Ranges asked for again within one transfer before a short one ends it as -1005 (with
    /// resume data): each carries at least a byte, and a server that sends a few at a time
    /// should not cost a request per byte.
    static let maximumRangeContinuations = 1_000

    private func followRedirect(to location: String) -> TransferEnd? {
        guard redirectCount < RedirectPolicy.maximumRedirects else {
            return .failed(TransferError(code: .httpTooManyRedirects, failingURL: request.url))
        }
        let status = heads.completed?.statusCode ?? 302
        let originChanged = !CurlURL.isSameOrigin(request.url, location)
        let redirect = RedirectPolicy.nextRequest(after: request, statusCode: status, location: location, originChanged: originChanged)
        var redirectResponse: JSONValue = .null
        if let head = heads.completed {
            redirectResponse = (try? JSONValue(encoding: HTTPResponseSnapshot(url: request.url, head: head))) ?? .null
        }
        let data: [String: JSONValue] = ["response": redirectResponse, "newRequest": (try? JSONValue(encoding: redirect.request)) ?? .null]
        if ask(.taskWillPerformHTTPRedirection, data, pending: .redirect(redirect), proposed: redirect.request) {
            return nil
        }
        return proceed(with: redirect)
    }

    /// Follows a redirect (as proposed, or as the receiver changed it).
    func proceed(with redirect: RedirectPolicy.NextRequest) -> TransferEnd? {
        redirectCount += 1
        // An answered challenge's credential, and a client certificate the delegate gave, are
        // for the origin that asked (URLSession keeps them on same-origin redirects only): another
        // origin that wants a certificate asks the delegate for its own.
        if !CurlURL.isSameOrigin(request.url, redirect.request.url) {
            challengeResponse = nil
            delegateClientCertificate = nil
            hasAskedForClientCertificate = false
        }
        request = redirect.request
        sendsBody = sendsBody && redirect.keepsBody
        currentRequestReported = false
        redirectBody.removeAll()
        do {
            // The next hop starts the file over, so it asks for the whole representation: a
            // resume's Range sent on to it had its part written at offset 0 of the emptied file.
            try file?.truncateToZero()
            bytesReceived = 0
            resumeRequest = nil
            if sendsBody { requestBodyStream() }
            try configureExchange()
            return nil
        } catch {
            return .failed(TransferError(code: .cannotWriteToFile, failingURL: request.url))
        }
    }

    /// A 401: the delegate decides (see `askChallenge`), else URLSession's default handling.
    /// Returns nil when a new exchange is set up or a decision awaited, else the ending.
    private func challenged() -> TransferEnd? {
        let challenges = AuthenticationChallenge.parse(heads.completed?.values(of: "WWW-Authenticate") ?? [])
        guard !challenges.isEmpty, (try? CurlURL(parsing: request.url)) != nil else { return .finished }
        defer { challengeRounds += 1 }
        if askChallenge(challenges, previousFailureCount: challengeRounds) { return nil }
        return answerByDefault(challenges)
    }

    /// URLSession's default handling: the strongest challenge the session stores an untried
    /// credential for; without one, the 401 is the task's response.
    func answerByDefault(_ challenges: [AuthenticationChallenge]) -> TransferEnd? {
        guard let url = try? CurlURL(parsing: request.url) else { return .finished }
        let untried = job.claim.credentials.filter { !triedCredentialIDs.contains($0.id) }
        guard let (challenge, credential) = CredentialSelection.select(
            challenges: challenges, credentials: untried, host: url.host,
            port: url.effectivePort ?? 80, scheme: url.scheme
        ) else { return .finished }
        triedCredentialIDs.insert(credential.id)
        return retry(with: (credential.user, credential.password, challenge.scheme))
    }

    /// A new exchange in which curl answers the challenge with this credential (running the
    /// scheme's handshake: Basic, Digest, NTLM, Negotiate).
    func retry(with credential: (user: String, password: String, scheme: AuthenticationChallenge.Scheme)) -> TransferEnd? {
        challengeResponse = credential
        return restartExchange()
    }

    /// Starts the current exchange again from where it started, with what was changed for it
    /// (a credential, a certificate): the answer to a challenge.
    func restartExchange() -> TransferEnd? {
        do {
            try rewindExchange()
            if sendsBody { requestBodyStream() }
            try configureExchange()
            return nil
        } catch {
            return .failed(TransferError(code: .cannotWriteToFile, failingURL: request.url))
        }
    }

    /// Drops what the current exchange received, back to where it started.
    func rewindExchange() throws {
        if let file, file.bytesWritten > exchangeStartBytes {
            try file.truncate(to: exchangeStartBytes)
        }
        body.removeAll(keepingCapacity: true)
        // The delegate's data starts again with the new exchange's body.
        dataReported = 0
        bytesReceived = exchangeStartBytes
        response = nil
    }

    /// The URLSession error for a failed exchange: ours when we caused it, else curl's, mapped.
    private func error(for result: Int32) -> TransferError {
        if let failure { return failure }
        // Only when no address could be connected to: curl tries a host's other addresses after a
        // refused one, and a failure on one it reached (a cut body, a bad certificate, a timeout)
        // is that failure, not the policy's (which would also keep a background task from retrying).
        if let refusal, result == CurlErrorMapping.couldntConnect {
            return TransferError(code: .cannotConnectToHost, failingURL: request.url, reason: refusal)
        }
        let detail = easy.lastErrorDetail ?? ""
        var code = CurlErrorMapping.urlErrorCode(
            curlCode: result, sslVerifyResult: easy.sslVerifyResult,
            serverRequestedClientCertificate: detail.contains("certificate required")
        )
        // With TLS 1.3 the server judges the client's certificate after the handshake, so its
        // alert arrives as a read error: tell those apart from a lost connection.
        if detail.contains("alert certificate required") {
            code = .clientCertificateRequired
        } else if detail.contains("alert bad certificate") || detail.contains("alert unknown ca") || detail.contains("alert certificate unknown") {
            code = .clientCertificateRejected
        }
        var connect = CurlErrorMapping.connectFailure(curlCode: result, osErrno: easy.osErrno, detail: detail)
        // A timeout once the TCP connection stood (a TLS handshake or a proxy's CONNECT that
        // stalled) is the server's doing, not the network's: a plain -1001, not waited out.
        if connect?.code == .timedOut, easy.timings.connect > 0 { connect = nil }
        if let connect { code = connect.code }
        var reason = easy.lastErrorDetail
        if code == .timedOut, job.claim.resourceDeadline.timeIntervalSinceNow <= 0 {
            reason = "timeoutIntervalForResource elapsed"
        }
        var error = TransferError(code: code, failingURL: request.url, reason: reason)
        error.isTransientConnectivityFailure = connect?.isTransient ?? false
        return error
    }
}

extension AuthenticationChallenge.Scheme {
    var curlMethods: CurlAuthMethods {
        switch self {
        case .basic: .basic
        case .digest: .digest
        case .ntlm: .ntlm
        case .negotiate: .negotiate
        }
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
