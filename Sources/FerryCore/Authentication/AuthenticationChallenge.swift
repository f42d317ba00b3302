/// One challenge of a `WWW-Authenticate` header.
public struct AuthenticationChallenge: Sendable, Equatable {
    public enum Scheme: String, Sendable, Comparable {
        case basic = "Basic"
        case digest = "Digest"
        case ntlm = "NTLM"
        case negotiate = "Negotiate"

        /// URLSession answers the strongest scheme it can: Negotiate, NTLM, Digest, then Basic.
        var strength: Int {
            switch self {
            case .basic: 0
            case .digest: 1
            case .ntlm: 2
            case .negotiate: 3
            }
        }

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.strength < rhs.strength }

        /// The method name of `URLProtectionSpace.authenticationMethod` in event payloads.
        public var authenticationMethod: ProtectionSpace.AuthenticationMethod {
            switch self {
            case .basic: .httpBasic
            case .digest: .httpDigest
            case .ntlm: .ntlm
            case .negotiate: .negotiate
            }
        }
    }

    public var scheme: Scheme
    public var realm: String?

    public init(scheme: Scheme, realm: String?) {
        self.scheme = scheme
        self.realm = realm
    }

    /// The challenges Ferry can answer, from every `WWW-Authenticate` value of a response,
    /// strongest first. Unknown schemes are skipped. Tolerates several challenges in one value
    /// (`Basic realm="a", Digest realm="b", nonce="…"`).
    public static func parse(_ values: [String]) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        // A hostile origin controls these values: longer ones are not challenges anyone answers.
        for value in values.prefix(maximumValues) where value.utf8.count <= maximumValueBytes {
            for (schemeName, parameters) in split(value) {
                guard let scheme = Scheme.allCases.first(where: { $0.rawValue.lowercased() == schemeName.lowercased() }) else { continue }
                challenges.append(AuthenticationChallenge(scheme: scheme, realm: parameters["realm"]))
            }
        }
        return challenges.sorted { $0.scheme > $1.scheme }
    }

    /// The longest `WWW-Authenticate` value read (a Digest challenge is a few hundred bytes);
    /// longer ones are ignored, as if absent.
    public static let maximumValueBytes = 8 * 1024
    /// How many `WWW-Authenticate` fields of one response are read.
    public static let maximumValues = 16

    /// Splits a header value into (scheme, parameters) pairs: a new challenge starts at a token
    /// that is not followed by "=".
    private static func split(_ value: String) -> [(String, [String: String])] {
        var result: [(String, [String: String])] = []
        var tokens = Tokenizer(value)
        while let token = tokens.next() {
            if case .word(let word) = token {
                if tokens.peekIsEquals {
                    tokens.skipEquals()
                    let parameterValue = tokens.nextValue() ?? ""
                    if !result.isEmpty { result[result.count - 1].1[word.lowercased()] = parameterValue }
                } else {
                    result.append((word, [:]))
                }
            }
        }
        return result
    }
}

extension AuthenticationChallenge.Scheme: CaseIterable {}

/// A tiny tokenizer for auth-param lists: words, "=", quoted strings, commas.
private struct Tokenizer {
    enum Token { case word(String), comma }
    private let scalars: [Character]
    private var index = 0

    init(_ text: String) { scalars = Array(text) }

    private mutating func skipSpaces() {
        while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
    }

    var peekIsEquals: Bool {
        var probe = index
        while probe < scalars.count, scalars[probe] == " " { probe += 1 }
        return probe < scalars.count && scalars[probe] == "="
    }

    mutating func skipEquals() {
        skipSpaces()
        if index < scalars.count, scalars[index] == "=" { index += 1 }
    }

    mutating func nextValue() -> String? {
        skipSpaces()
        guard index < scalars.count else { return nil }
        if scalars[index] == "\"" {
            index += 1
            var value = ""
            while index < scalars.count, scalars[index] != "\"" {
                if scalars[index] == "\\", index + 1 < scalars.count { index += 1 }
                value.append(scalars[index])
                index += 1
            }
            index += 1
            return value
        }
        var value = ""
        while index < scalars.count, scalars[index] != ",", scalars[index] != " " {
            value.append(scalars[index])
            index += 1
        }
        return value
    }

    /// The next word or comma. A loop, not recursion: a value of many stray "=" must not cost
    /// one stack frame each (a worker thread's stack is small).
    mutating func next() -> Token? {
        while true {
            skipSpaces()
            guard index < scalars.count else { return nil }
            if scalars[index] == "," {
                index += 1
                return .comma
            }
            var word = ""
            while index < scalars.count, !" \t,=".contains(scalars[index]) {
                word.append(scalars[index])
                index += 1
            }
            if !word.isEmpty { return .word(word) }
            index += 1  // a stray "=" that follows no word
        }
    }
}
