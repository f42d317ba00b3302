import Foundation

extension OriginResponder {
    /// Serves `bytes` as a static resource with RFC 9110 semantics, so tests can drive a
    /// client's range, resume and revalidation logic against an origin that gets them right.
    ///
    /// - GET and HEAD (others: 405). Preconditions in RFC 9110 §13.2.2 order: `If-Match`,
    ///   `If-Unmodified-Since` (412), `If-None-Match`, `If-Modified-Since` (304), then `Range`.
    /// - `Range` (GET only, single range): `bytes=N-`, `bytes=N-M`, `bytes=-S` → 206 with
    ///   `Content-Range: bytes N-M/TOTAL`; unsatisfiable → 416 with `bytes */TOTAL`.
    /// - `If-Range` that does not match (a strong comparison with `etag`, or an HTTP-date equal
    ///   to `lastModified`) → the whole resource with 200. Weak tags never match.
    /// - `acceptsRanges: false` ignores `Range` and omits `Accept-Ranges`.
    ///
    /// `etag` is sent verbatim (`"v1"` or `W/"v1"`). `request` is evaluated rather than the
    /// responder's own, so a handler may alter it first. The fault parameters are those of
    /// `BodyFaults` and apply to the body actually sent (the range, for a 206).
    public func serveResource(
        _ bytes: [UInt8],
        for request: OriginRequest,
        etag: String? = nil,
        lastModified: Date? = nil,
        contentType: String = "application/octet-stream",
        acceptsRanges: Bool = true,
        extraHeaders: [(String, String)] = [],
        resetAfter: Int? = nil,
        closeAfter: Int? = nil,
        stallAfter: (bytes: Int, seconds: Double)? = nil,
        bytesPerSecond: Int? = nil
    ) throws {
        let faults = BodyFaults(resetAfter: resetAfter, closeAfter: closeAfter, stallAfter: stallAfter, bytesPerSecond: bytesPerSecond)
        guard request.method == "GET" || request.method == "HEAD" else {
            try respond(status: 405, headers: [("Allow", "GET, HEAD")], body: [])
            return
        }
        let tag = etag.flatMap(EntityTag.init)
        let modified = lastModified.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)) }
        var validators: [(String, String)] = []
        if let etag { validators.append(("ETag", etag)) }
        if let modified { validators.append(("Last-Modified", HTTPDate.format(modified))) }
        var headers = [("Content-Type", contentType)] + validators
        if acceptsRanges { headers.append(("Accept-Ranges", "bytes")) }
        headers += extraHeaders

        switch Self.precondition(request, tag: tag, lastModified: modified) {
        case .failed:
            try respond(status: 412, headers: validators + extraHeaders, body: [])
            return
        case .notModified:
            try writeHead(status: 304, headers: validators + extraHeaders)
            return
        case .proceed:
            break
        }

        var range = ByteRange.whole
        if acceptsRanges, request.method == "GET", Self.ifRangeAllows(request, tag: tag, lastModified: modified) {
            range = ByteRange.evaluate(request.header("Range"), total: bytes.count)
        }
        switch range {
        case .whole:
            try respond(status: 200, headers: headers, body: bytes, faults: faults)
        case .partial(let first, let last):
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(bytes.count)"))
            try respond(status: 206, headers: headers, body: Array(bytes[first...last]), faults: faults)
        case .unsatisfiable:
            try respond(status: 416, headers: [("Content-Range", "bytes */\(bytes.count)")] + validators + extraHeaders, body: [])
        }
    }

    private enum Precondition { case proceed, notModified, failed }

    private static func precondition(_ request: OriginRequest, tag: EntityTag?, lastModified: Date?) -> Precondition {
        if let ifMatch = request.header("If-Match") {
            let matches = ifMatch.trimmingCharacters(in: .whitespaces) == "*"
                ? tag != nil
                : tag.map { tag in EntityTag.parseList(ifMatch).contains { $0.matchesStrongly(tag) } } ?? false
            if !matches { return .failed }
        } else if let since = request.header("If-Unmodified-Since").flatMap(HTTPDate.parse), let lastModified {
            if lastModified > since { return .failed }
        }
        if let ifNoneMatch = request.header("If-None-Match") {
            let matches = ifNoneMatch.trimmingCharacters(in: .whitespaces) == "*"
                ? true
                : tag.map { tag in EntityTag.parseList(ifNoneMatch).contains { $0.matchesWeakly(tag) } } ?? false
            return matches ? .notModified : .proceed
        }
        if let since = request.header("If-Modified-Since").flatMap(HTTPDate.parse), let lastModified {
            if lastModified <= since { return .notModified }
        }
        return .proceed
    }

    /// RFC 9110 §13.1.5: without `If-Range` the range applies; with it, only on a strong match.
    private static func ifRangeAllows(_ request: OriginRequest, tag: EntityTag?, lastModified: Date?) -> Bool {
        guard let ifRange = request.header("If-Range")?.trimmingCharacters(in: .whitespaces) else { return true }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            guard let tag, let sent = EntityTag(ifRange) else { return false }
            return sent.matchesStrongly(tag)
        }
        guard let lastModified, let sent = HTTPDate.parse(ifRange) else { return false }
        return sent == lastModified
    }
}
