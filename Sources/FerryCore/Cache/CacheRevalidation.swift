import Foundation

/// Folding a 304 Not Modified into the stored response it validated (RFC 9111 §4.3.3–§4.3.4).
public enum CacheRevalidation {
    /// Fields a 304 never overwrites: those describing the stored body as it was received
    /// (its length and coding, which Ferry may have decoded while storing: §3.2 allows
    /// keeping them), and connection-specific ones (§3.1).
    static let protectedFields: Set<String> = ["content-length", "content-encoding", "content-range"]

    /// The stored response updated from `notModified`: each field the 304 carries replaces the
    /// stored field of that name in place (new ones are appended), and the entry's request
    /// and response times become those of the validating exchange, so its age restarts.
    ///
    /// `nil` when the 304 does not select this entry (§4.3.4): its entity tag, or failing
    /// that its `Last-Modified`, differs from the stored one. The caller then drops the
    /// entry and repeats the request without conditions.
    public static func merge(stored: CachedResponse, notModified: ResponseHead, requestTime: Date, now: Date) -> CachedResponse? {
        guard selects(stored, notModified) else { return nil }
        let excluded = protectedFields.union(CachedResponse.connectionSpecificFields(of: notModified))
        let updates = notModified.fields.filter { !excluded.contains($0.name.lowercased()) }
        let updatedNames = Set(updates.map { $0.name.lowercased() })

        var merged: [CachedHeaderField] = []
        var written: Set<String> = []
        for field in stored.headerFields {
            let name = field.name.lowercased()
            guard updatedNames.contains(name) else {
                merged.append(field)
                continue
            }
            // The first stored occurrence takes all the new values; later ones are dropped.
            if written.insert(name).inserted {
                merged += updates.filter { $0.name.lowercased() == name }.map { CachedHeaderField(name: $0.name, value: $0.value) }
            }
        }
        for update in updates where !written.contains(update.name.lowercased()) {
            merged.append(CachedHeaderField(name: update.name, value: update.value))
        }

        var result = stored
        result.headerFields = merged
        result.requestTime = requestTime
        result.responseTime = now
        return result
    }

    /// §4.3.4 selection, for one stored response: a 304 entity tag must equal the stored
    /// one (weak comparison: a weak tag validates too); without entity tags, `Last-Modified`
    /// must agree when both have it. A 304 without validators selects the lone entry.
    private static func selects(_ stored: CachedResponse, _ notModified: ResponseHead) -> Bool {
        if let newTag = notModified.value(of: "ETag") {
            guard let storedTag = stored.value(of: "ETag") else { return false }
            return opaqueTag(newTag) == opaqueTag(storedTag)
        }
        if let newDate = notModified.value(of: "Last-Modified"), let storedDate = stored.value(of: "Last-Modified") {
            return HTTPDate.parse(newDate) == HTTPDate.parse(storedDate)
        }
        return true
    }

    /// RFC 9110 §8.8.3.2 weak comparison: the opaque tags, ignoring the `W/` prefix.
    private static func opaqueTag(_ tag: String) -> String {
        let trimmed = tag.trimmingSpaces
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }
}
