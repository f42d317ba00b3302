extension ResumeDecision {
    /// The validator to resume a download with, or `nil` when it cannot be resumed safely.
    ///
    /// Only a GET answered with 200 or 206 is resumable; `Accept-Ranges: none` says the origin
    /// will not serve ranges. A strong entity tag is preferred; a weak one is never used
    /// (RFC 9110 forbids it in `If-Range`), and neither is `Last-Modified` beside it: a client
    /// with an entity tag must not send a date (§13.1.5), and one second's resolution let a
    /// file changed within the second, same size, be spliced. Without a validator a resumed
    /// download could splice two different versions of a file together, so there is no resume
    /// at all.
    public static func isResumable(
        method: String,
        statusCode: Int,
        etag: String?,
        lastModified: String?,
        acceptRanges: String?
    ) -> ResumeValidator? {
        guard method == "GET", statusCode == 200 || statusCode == 206 else { return nil }
        if let acceptRanges, acceptRanges.trimmingASCIISpaces().lowercased() == "none" {
            return nil
        }
        if let etag = etag?.trimmingASCIISpaces() {
            if isStrongETag(etag) { return .strongETag(String(etag)) }
            // A weak tag is an entity tag all the same (a malformed one is none).
            if etag.hasPrefix("W/") { return nil }
        }
        if let lastModified = lastModified?.trimmingASCIISpaces(), !lastModified.isEmpty {
            return .lastModified(String(lastModified))
        }
        return nil
    }

    /// `"…"` with no `W/` prefix and no quote, control character or space inside
    /// (RFC 9110 `entity-tag` with `etagc`).
    static func isStrongETag(_ tag: Substring) -> Bool {
        let bytes = Array(tag.utf8)
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else {
            return false
        }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }
    }
}
