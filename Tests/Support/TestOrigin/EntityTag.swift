/// An entity-tag (RFC 9110 §8.8.3) and the two ways of comparing them.
struct EntityTag: Equatable {
    var isWeak: Bool
    /// The quoted part, quotes included.
    var opaque: String

    /// Parses one entity-tag such as `"abc"` or `W/"abc"`; nil if malformed.
    init?(_ text: String) {
        let tags = Self.parseList(text)
        guard tags.count == 1, let tag = tags.first else { return nil }
        self = tag
    }

    private init(isWeak: Bool, opaque: String) {
        self.isWeak = isWeak
        self.opaque = opaque
    }

    /// Both strong and character-for-character equal: what `If-Range` and `If-Match` need.
    func matchesStrongly(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaque == other.opaque
    }

    /// Equal opaque parts, weakness ignored: what `If-None-Match` needs.
    func matchesWeakly(_ other: EntityTag) -> Bool {
        opaque == other.opaque
    }

    /// Parses a comma-separated list of entity-tags. Commas may appear inside the quotes, so a
    /// plain split would be wrong. Stops at the first malformed element.
    static func parseList(_ text: String) -> [EntityTag] {
        var tags: [EntityTag] = []
        var rest = Substring(text)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { return tags }
            var isWeak = false
            if rest.hasPrefix("W/") {
                isWeak = true
                rest = rest.dropFirst(2)
            }
            guard rest.first == "\"", let close = rest.dropFirst().firstIndex(of: "\"") else { return tags }
            tags.append(EntityTag(isWeak: isWeak, opaque: String(rest[...close])))
            rest = rest[rest.index(after: close)...]
        }
    }
}
