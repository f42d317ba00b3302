/// The directives of `Cache-Control` (RFC 9111 §5.2), request and response alike.
///
/// Parsing is tolerant: unknown directives are skipped, arguments may be quoted or not, and a
/// malformed element never spoils the others. When a directive repeats, the first occurrence
/// counts (RFC 9111 §4.2.1).
public struct CacheControl: Sendable, Equatable {
    /// `no-cache`, either for the whole response or (response only) for some fields.
    public enum NoCache: Sendable, Equatable {
        case all
        /// Lowercased field names that must not be reused without revalidation.
        case fields(Set<String>)
    }

    /// Seconds; an invalid value reads as 0, because RFC 9111 §4.2.1 suggests treating invalid
    /// freshness information as stale.
    public var maxAge: Int?
    /// `s-maxage`: for shared caches only; a session's cache is private and ignores it.
    public var sharedMaxAge: Int?
    public var noCache: NoCache?
    public var noStore = false
    public var isPrivate = false
    public var isPublic = false
    public var mustRevalidate = false
    public var proxyRevalidate = false
    public var mustUnderstand = false
    /// Request: seconds of staleness the client accepts; `Int.max` when it gave no limit.
    public var maxStale: Int?
    public var minFresh: Int?
    public var onlyIfCached = false
    public var immutable = false

    /// RFC 9111 §1.2.2: delta-seconds beyond what fits are 2^31.
    public static let maximumDeltaSeconds = 2_147_483_648

    public init() {}

    /// All `Cache-Control` field lines of a message, in order. With no `Cache-Control` at all,
    /// `Pragma: no-cache` counts as `no-cache` (HTTP/1.0 compatibility, RFC 9111 §5.4).
    public init(fieldValues: [String], pragma: [String] = []) {
        for value in fieldValues {
            for (name, argument) in Self.directives(in: value) {
                apply(name: name, argument: argument)
            }
        }
        if fieldValues.isEmpty,
           pragma.contains(where: { Self.directives(in: $0).contains { $0.name == "no-cache" } }) {
            noCache = .all
        }
    }

    public init(_ value: String) {
        self.init(fieldValues: [value])
    }

    private mutating func apply(name: String, argument: String?) {
        switch name {
        case "max-age":
            if maxAge == nil { maxAge = Self.deltaSeconds(argument) ?? 0 }
        case "s-maxage":
            if sharedMaxAge == nil { sharedMaxAge = Self.deltaSeconds(argument) ?? 0 }
        case "no-cache":
            let names = Set((argument ?? "").split(separator: ",").map { String($0).trimmingSpaces.lowercased() }.filter { !$0.isEmpty })
            switch (noCache, names.isEmpty) {
            case (_, true), (.all, _):
                noCache = .all
            case (.fields(let earlier), false):
                noCache = .fields(earlier.union(names))
            case (nil, false):
                noCache = .fields(names)
            }
        case "no-store": noStore = true
        case "private": isPrivate = true
        case "public": isPublic = true
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "must-understand": mustUnderstand = true
        case "max-stale":
            if maxStale == nil { maxStale = argument == nil ? Int.max : Self.deltaSeconds(argument) }
        case "min-fresh":
            if minFresh == nil { minFresh = Self.deltaSeconds(argument) }
        case "only-if-cached": onlyIfCached = true
        case "immutable": immutable = true
        default: break
        }
    }

    /// `1*DIGIT`, capped; quoted digits are tolerated. `nil` when it is not a number.
    static func deltaSeconds(_ argument: String?) -> Int? {
        guard let argument, !argument.isEmpty, argument.allSatisfy(\.isASCIIDigit) else { return nil }
        return min(Int(argument) ?? maximumDeltaSeconds, maximumDeltaSeconds)
    }

    /// Splits `a, b=1, c="x, y"` into (lowercased name, unquoted argument) pairs. Commas
    /// inside a quoted string do not separate directives.
    static func directives(in value: String) -> [(name: String, argument: String?)] {
        var elements: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in value {
            if escaped {
                current.append(character)
                escaped = false
            } else if inQuotes, character == "\\" {
                current.append(character)
                escaped = true
            } else if character == "\"" {
                current.append(character)
                inQuotes.toggle()
            } else if character == ",", !inQuotes {
                elements.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        elements.append(current)

        return elements.compactMap { element in
            let parts = element.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).trimmingSpaces.lowercased()
            guard !name.isEmpty else { return nil }
            guard parts.count == 2 else { return (name, nil) }
            return (name, unquoted(String(parts[1]).trimmingSpaces))
        }
    }

    private static func unquoted(_ text: String) -> String {
        guard text.first == "\"" else { return text }
        var result = ""
        var escaped = false
        for character in text.dropFirst() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                break
            } else {
                result.append(character)
            }
        }
        return result
    }
}

extension CacheControl {
    /// The directives of a response head.
    public init(head: ResponseHead) {
        self.init(fieldValues: head.values(of: "Cache-Control"), pragma: head.values(of: "Pragma"))
    }

    /// The directives of a request.
    public init(request: TransferRequest) {
        let fields = request.allHTTPHeaderFields
        self.init(
            fieldValues: fields.filter { $0.key.lowercased() == "cache-control" }.map(\.value),
            pragma: fields.filter { $0.key.lowercased() == "pragma" }.map(\.value)
        )
    }
}
