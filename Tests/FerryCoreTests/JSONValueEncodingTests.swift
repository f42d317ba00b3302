import FerryCore
import Foundation
import Testing

/// `JSONValue(encoding:)` and `serialized()` write directly what the Foundation coders would
/// (the path through text they replace): checked against them on models and random values.
@Suite("JSON written without Foundation's coders in between")
struct JSONValueEncodingTests {
    private struct Sample: Codable {
        enum Kind: String, Codable { case first, second }
        var text = "a \"quoted\" / \\ \u{1}\n é 😀"
        var whole = 42
        var negative: Int64 = -7
        var fraction = 0.30000000000000004
        var flag = true
        var missing: String?
        var present: Double? = 1.5
        var date = Date(timeIntervalSince1970: 1_700_000_000.123)
        var url = URL(string: "https://origin.example/a/b?c=d")!
        var data = Data([0, 1, 2, 250])
        var kind = Kind.second
        var list = [[1, 2], [], [3]]
        var byNumber: [Int: String] = [1: "one", 20: "twenty"]
        var byName: [String: [Bool?]] = ["b": [true, nil], "A": []]
        var nested: JSONValue = .object(["z": .array([.null, .number(1e16)]), "a": .string("x")])
    }

    private func throughText(_ value: some Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONCoding.makeEncoder().encode(value))
    }

    private func foundationBytes(_ value: JSONValue) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    @Test("a model with every kind of member encodes as through text")
    func modelMatches() throws {
        #expect(try JSONValue(encoding: Sample()) == throughText(Sample()))
        let request = TransferRequest(url: "https://origin.example/file")
        let response = HTTPResponseSnapshot(url: request.url, head: ResponseHead(statusCode: 200, fields: [("Content-Type", "text/plain")]))
        var transaction = TransactionMetrics(request: request, response: response, resourceFetchType: .networkLoad)
        transaction.fetchStartDate = Date(timeIntervalSince1970: 1_700_000_000.5)
        let metrics = TaskMetrics(taskInterval: .init(start: Date(timeIntervalSince1970: 1_700_000_000), duration: 0.25), redirectCount: 1, transactionMetrics: [transaction])
        #expect(try JSONValue(encoding: metrics) == throughText(metrics))
        #expect(try JSONValue(encoding: [request]) == throughText([request]))
    }

    @Test("infinity is refused, as by JSONEncoder")
    func infinityRefused() {
        #expect(throws: EncodingError.self) { try JSONValue(encoding: [Double.infinity]) }
    }

    @Test("serialized bytes are JSONEncoder's, for random documents")
    func serializedMatches() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let value = Self.randomValue(depth: 0, using: &random)
            #expect(value.serialized() == (try foundationBytes(value)), "\(value)")
        }
    }

    private static func randomValue(depth: Int, using random: inout SystemRandomNumberGenerator) -> JSONValue {
        switch Int.random(in: depth > 3 ? 0..<4 : 0..<6, using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2:
            let numbers: [Double] = [
                0, -0.0, 1, -1, 0.1, 1e-7, 2.5e-5, 123_456_789.123, 9.5e15, 1e16, 1.7976931348623157e308, 5e-324,
                Double(Int.random(in: -1_000_000...1_000_000, using: &random)), Double.random(in: -1e6...1e6, using: &random),
            ]
            return .number(numbers.randomElement(using: &random)!)
        case 3: return .string(randomString(using: &random))
        case 4: return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0..<5, using: &random) { members[randomString(using: &random)] = randomValue(depth: depth + 1, using: &random) }
            return .object(members)
        }
    }

    private static func randomString(using random: inout SystemRandomNumberGenerator) -> String {
        let alphabet: [Unicode.Scalar] = ["a", "B", "z", "_", "0", "9", " ", "/", "\\", "\"", "é", "😀", "\u{2028}", "\u{7F}"]
            + (0..<32).map { Unicode.Scalar(UInt8($0)) }
        var text = ""
        for _ in 0..<Int.random(in: 0..<8, using: &random) { text.unicodeScalars.append(alphabet.randomElement(using: &random)!) }
        return text
    }
}
