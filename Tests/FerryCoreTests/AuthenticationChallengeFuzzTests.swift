import FerryCore
import Testing

/// `WWW-Authenticate` values come from any origin a tenant names: the parser must survive
/// whatever they hold, in bounded time and stack.
@Suite("WWW-Authenticate parsing under hostile input")
struct AuthenticationChallengeFuzzTests {
    /// Pieces that exercise every branch of the tokenizer: separators, quotes, escapes, schemes.
    static let pieces = [
        " ", "\t", ",", "=", "==", "\"", "\\", "\\\"", "Basic", "basic", "Digest", "NTLM", "Negotiate",
        "Bearer", "realm", "realm=", "realm=\"", "nonce", "x", "é", "💥", "\u{0}", "\r\n", "a=b",
    ]

    @Test("random values: no crash, only known schemes, never more challenges than words")
    func random() {
        var generator = SplitMix64(seed: 17)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let value = (0..<count).map { _ in Self.pieces.randomElement(using: &generator)! }.joined()
            let challenges = AuthenticationChallenge.parse([value])
            #expect(challenges.count <= value.split(whereSeparator: { " \t,=".contains($0) }).count)
            #expect(challenges == challenges.sorted { $0.scheme > $1.scheme })
        }
    }

    @Test("random bytes, several fields at once")
    func randomBytes() {
        var generator = SplitMix64(seed: 1717)
        for _ in 0..<1_000 {
            let values = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                String(decoding: (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }, as: UTF8.self)
            }
            _ = AuthenticationChallenge.parse(values)
        }
    }

    @Test("thousands of stray '=' within the bound are parsed iteratively, the challenge kept")
    func deepWithinBound() {
        let value = #"Basic realm="files", "# + String(repeating: "=", count: AuthenticationChallenge.maximumValueBytes - 30)
        #expect(value.utf8.count <= AuthenticationChallenge.maximumValueBytes)
        #expect(AuthenticationChallenge.parse([value]) == [.init(scheme: .basic, realm: "files")])
    }

    @Test("60,000 '=' (the crash of issue 17), a megabyte, and an unterminated quote: ignored or parsed, never a crash")
    func hostileLengths() {
        #expect(AuthenticationChallenge.parse([String(repeating: "=", count: 60_000)]).isEmpty)
        #expect(AuthenticationChallenge.parse(["Basic realm=x, " + String(repeating: "= ", count: 500_000)]).isEmpty)
        #expect(AuthenticationChallenge.parse(["Basic realm=\"" + String(repeating: "\\", count: 5_000)]) == [.init(scheme: .basic, realm: String(repeating: "\\", count: 2_500))])
        let many = Array(repeating: "Basic realm=a", count: 1_000)
        #expect(AuthenticationChallenge.parse(many).count == AuthenticationChallenge.maximumValues)
    }
}
