import Foundation

/// How old a stored response is and how long it stays fresh: RFC 9111 §4.2, for a private cache.
public enum CacheFreshness {
    /// §4.2.2: the usual heuristic, a tenth of the time since the last modification …
    public static let heuristicFraction = 0.1
    /// … and never more than a day, so an old file is not trusted for months.
    public static let maximumHeuristicLifetime: TimeInterval = 86_400

    /// §4.2.3 `current_age`: the `Age` the origin or caches reported, the apparent age from
    /// `Date`, the request's round trip, and the time it has spent in this cache.
    public static func age(of entry: CachedResponse, now: Date) -> TimeInterval {
        let head = entry.head
        let dateValue = head.value(of: "Date").flatMap(HTTPDate.parse) ?? entry.responseTime
        let ageValue = head.value(of: "Age").flatMap { CacheControl.deltaSeconds($0.trimmingSpaces) }.map(TimeInterval.init) ?? 0

        let apparentAge = max(0, entry.responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, entry.responseTime.timeIntervalSince(entry.requestTime))
        let correctedAgeValue = ageValue + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(entry.responseTime))
        return correctedInitialAge + residentTime
    }

    /// §4.2.1 for a private cache: `max-age`, else `Expires` − `Date` (an invalid `Expires`
    /// means already stale), else the heuristic of §4.2.2 — `s-maxage` is ignored, it is for
    /// shared caches only.
    public static func freshnessLifetime(of entry: CachedResponse) -> TimeInterval {
        let head = entry.head
        let control = CacheControl(head: head)
        if let maxAge = control.maxAge { return TimeInterval(maxAge) }

        let dateValue = head.value(of: "Date").flatMap(HTTPDate.parse) ?? entry.responseTime
        let expiresValues = head.values(of: "Expires")
        if !expiresValues.isEmpty {
            // Several Expires fields, or one that does not parse, make the response stale.
            guard expiresValues.count == 1, let expires = HTTPDate.parse(expiresValues[0]) else { return 0 }
            return max(0, expires.timeIntervalSince(dateValue))
        }

        guard control.isPublic || CachePolicy.heuristicallyCacheableStatuses.contains(entry.statusCode),
              let lastModified = head.value(of: "Last-Modified").flatMap(HTTPDate.parse)
        else { return 0 }
        let sinceModification = max(0, dateValue.timeIntervalSince(lastModified))
        return min(sinceModification * heuristicFraction, maximumHeuristicLifetime)
    }

    /// §4.2: fresh while the lifetime exceeds the age.
    public static func isFresh(_ entry: CachedResponse, now: Date) -> Bool {
        freshnessLifetime(of: entry) > age(of: entry, now: now)
    }
}
