import FerryCore

/// Random JSON documents as text, seeded so a failure can be replayed: random structures, objects
/// built from an endpoint's own field names (so validation is reached, not just the parser), and
/// hostile tokens — huge and tiny numbers, escapes (NUL included), lone surrogates, duplicate
/// keys, long strings and nesting far beyond Ferry's 32 levels.
struct RandomJSON {
    private var random: SplitMix64
    /// Field names of the endpoint under test, used as keys half of the time.
    private let vocabulary: [String]

    init(seed: UInt64, vocabulary: [String]) {
        random = SplitMix64(seed: seed)
        self.vocabulary = vocabulary
    }

    /// One document; usually an object, sometimes anything at all.
    mutating func document() -> String {
        switch roll(100) {
        case 0..<8: return deepNesting()
        case 8..<18: return value(depth: 0)
        default: return object(depth: 0)
        }
    }

    /// `template` with every `§` replaced by a random value: a valid body with one field gone wrong.
    mutating func filling(_ template: String) -> String {
        var result = ""
        for character in template {
            if character == "§" { result += value(depth: 3) } else { result.append(character) }
        }
        return result
    }

    /// One of `templates`, filled.
    mutating func filling(oneOf templates: [String]) -> String {
        filling(pick(templates))
    }

    private mutating func roll(_ upperBound: Int) -> Int {
        Int(random.next() % UInt64(upperBound))
    }

    private mutating func pick<T>(_ choices: [T]) -> T {
        choices[roll(choices.count)]
    }

    private mutating func value(depth: Int) -> String {
        let containers = depth < 5 ? 3 : 0
        switch roll(9 + containers) {
        case 0: return "null"
        case 1: return roll(2) == 0 ? "true" : "false"
        case 2, 3: return number()
        case 4, 5, 6, 7: return string()
        case 8: return "\"\(pick(vocabulary))\""
        case 9, 10: return object(depth: depth + 1)
        default: return array(depth: depth + 1)
        }
    }

    private mutating func object(depth: Int) -> String {
        var members: [String] = []
        for _ in 0..<roll(7) {
            let key = roll(2) == 0 ? "\"\(pick(vocabulary))\"" : string()
            members.append("\(key):\(value(depth: depth))")
        }
        if !members.isEmpty, roll(10) == 0 { members.append(members[0]) }
        return "{" + members.joined(separator: roll(4) == 0 ? " , " : ",") + "}"
    }

    private mutating func array(depth: Int) -> String {
        "[" + (0..<roll(5)).map { _ in value(depth: depth) }.joined(separator: ",") + "]"
    }

    private mutating func deepNesting() -> String {
        let depth = 33 + roll(300)
        let opening = (0..<depth).map { _ in roll(2) == 0 ? "[" : "{\"\(pick(vocabulary))\":" }
        let closing = opening.reversed().map { $0 == "[" ? "]" : "}" }
        return opening.joined() + value(depth: 5) + closing.joined()
    }

    private mutating func number() -> String {
        pick([
            "0", "-0", "1", "-1", "0.5", "1.5", "-0.1", "2", "6", "64", "65", "65535", "65536", "120", "121",
            "1e308", "-1e308", "1e309", "1e400", "-1e400", "4.9e-324", "1e-400", "9007199254740993",
            "123456789012345678901234567890", "-9223372036854775809", "9223372036854775807", "1E2", "0.0000001",
            String(random.next() % 10_000), "-\(random.next() % 10_000)", "\(Double(roll(1_000_000)) / 7)",
        ])
    }

    private mutating func string() -> String {
        let pieces = [
            "", "a", "default", "background", "ephemeral", "data", "download", "upload", "GET", "POST", "CONNECT",
            "http://example.com/a", "https://example.com/", "ftp://example.com/", "file:///etc/passwd", "http://",
            "http://127.0.0.1:1/x", "YWJj", "!!", "frd1.AAAA.AAAA", "fy_live_x", "ses_x", "tsk_x", "blb_x", "whsec_x",
            "2026-01-31T12:00:00Z", "TLSv12", "TLSv13", "never", "always", "X-Custom", "Host", "Content-Length",
            "ü", "🦀", "\u{202E}rtl", "e\u{301}", "\\u00e9", "\\ud800", "\\udc00\\ud800", "\\ud83e\\udd80", "\\n",
            "\\r\\nX-Injected: 1", "\\t", "a\\u0000b", "\\\\", "\\\"", "\\/", "%00", "../../etc/passwd", "' OR 1=1 --", "$1",
        ]
        var text = pick(pieces)
        if roll(6) == 0 { text += pick(pieces) }
        if roll(25) == 0 { text += String(repeating: pick(["a", "é", "🦀"]), count: 5000 + roll(10_000)) }
        return "\"\(text)\""
    }
}
