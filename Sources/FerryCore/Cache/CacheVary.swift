/// `Vary` (RFC 9111 §4.1): a stored response answers only requests whose selecting header
/// fields equal those of the request that produced it.
public enum CacheVary {
    /// The lowercased field names `Vary` lists, all its field lines together; "*" included.
    public static func fieldNames(of response: ResponseHead) -> [String] {
        response.values(of: "Vary")
            .flatMap { $0.split(separator: ",") }
            .map { String($0).trimmingSpaces.lowercased() }
            .filter { !$0.isEmpty }
    }

    /// `Vary: *`: no later request can be known to match, so the response is never reused.
    public static func isWildcard(_ response: ResponseHead) -> Bool {
        fieldNames(of: response).contains("*")
    }

    /// The normalised values of the request fields the response varies on, to store with it.
    public static func selectingHeaders(request: TransferRequest, response: ResponseHead) -> [String: String] {
        var selected: [String: String] = [:]
        for name in fieldNames(of: response) where name != "*" {
            if let value = request.value(forHTTPHeaderField: name) {
                selected[name] = normalised(value)
            }
        }
        return selected
    }

    /// Whether `request` selects `entry`: every field its `Vary` names is absent in both or
    /// equal after normalisation (RFC 9111 §4.1 allows removing whitespace and combining).
    public static func matches(_ entry: CachedResponse, request: TransferRequest) -> Bool {
        let names = fieldNames(of: entry.head)
        guard !names.contains("*") else { return false }
        return names.allSatisfy { name in
            request.value(forHTTPHeaderField: name).map(normalised) == entry.varyingRequestHeaders[name]
        }
    }

    /// List elements trimmed and joined by ",", runs of spaces and tabs inside them reduced to
    /// one space: "gzip,  br" and "gzip, br" select the same response; case is kept.
    static func normalised(_ value: String) -> String {
        value.split(separator: ",", omittingEmptySubsequences: false)
            .map { element in
                element.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            }
            .joined(separator: ",")
    }
}
