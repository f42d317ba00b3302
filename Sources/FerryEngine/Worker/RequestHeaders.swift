import Curl
import FerryCore
import Foundation

/// The header fields a request goes out with: the session's `httpAdditionalHeaders` under the
/// request's own, a User-Agent, the session's cookies, and the content codings curl offers.
/// The URL cache matches `Vary` against exactly these, so both use this one function.
enum RequestHeaders {
    /// What curl sends for `CURLOPT_ACCEPT_ENCODING ""` with this libcurl build.
    static let acceptedEncodings = "deflate, gzip, br, zstd"

    static func effective(for request: TransferRequest, job: TransferJob, cookies: CookieJar, now: Date) -> [String: String] {
        let configuration = job.claim.configuration
        var sessionHeaders = configuration.httpAdditionalHeaders
        // The session's Authorization and Cookie are for the origin the task was created for:
        // after a redirect (or a resume) to another origin they stay behind.
        if !sessionHeaders.isEmpty, !CurlURL.isSameOrigin(request.url, job.claim.originalRequest.url) {
            sessionHeaders = sessionHeaders.filter { !RedirectPolicy.sessionCredentialFields.contains($0.key.lowercased()) }
        }
        var headers = HTTPHeaderRules.merge(sessionHeaders, under: request.allHTTPHeaderFields)
        func has(_ name: String) -> Bool { headers.keys.contains { $0.lowercased() == name } }
        if !has("user-agent") { headers["User-Agent"] = job.userAgent }
        // The session's cookies, unless the request brings its own Cookie header.
        if !has("cookie"), let url = CookieURL(string: request.url),
           let cookie = cookies.cookieHeader(for: url, handling: CookieHandling(configuration: configuration), now: now) {
            headers["Cookie"] = cookie
        }
        if job.claim.kind != .download, !has("accept-encoding") { headers["Accept-Encoding"] = acceptedEncodings }
        return headers
    }
}
