import Testing

@testable import FerryCore

@Suite("API keys and operator tokens")
struct SecurityAPIKeyTests {
    /// Computed independently (Python: zlib.crc32, base62 `0-9A-Za-z`, hashlib.sha256). Of the
    /// earlier shape, 22 random symbols: such keys stay valid.
    private let knownKey = "fy_live_Ferry0123456789abcdefg3EyfXE"
    private let knownKeyHash = "d35f7fa9948cedb4fe6274c19f6f3270f7b53beca8b10ae4e6371c42f7897ca7"

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test func crc32MatchesTheStandardCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
    }

    @Test func base62EncodesFixedWidth() {
        #expect(Base62.encode(0, width: 6) == "000000")
        #expect(Base62.encode(61, width: 6) == "00000z")
        #expect(Base62.encode(62, width: 6) == "000010")
        #expect(Base62.encode(UInt32.max, width: 6) == "4gfFC3")
    }

    @Test func parsesAKeyMadeByAnotherImplementation() throws {
        let parsed = try #require(APIKey.parse(knownKey))
        #expect(parsed.lookupPrefix == "Ferry012")
        #expect(hex(parsed.hash) == knownKeyHash)
        #expect(hex(APIKey.hash(knownKey)) == knownKeyHash)
    }

    @Test func parsesAKeyOfTheCurrentShapeMadeByAnotherImplementation() throws {
        // 30 random symbols (Python, as above).
        let key = "fy_live_Ferry0123456789abcdefghijklmno3dg2bA"
        let parsed = try #require(APIKey.parse(key))
        #expect(parsed.lookupPrefix == "Ferry012")
        #expect(hex(parsed.hash) == "fdd5317a965a045ff499ad2912d1813fecc20168e7e9bf0058e5bcd403283e83")
    }

    @Test func generatedKeyHasTheDocumentedShape() throws {
        var generator = SplitMix64(seed: 42)
        let key = APIKey.generate(using: &generator)
        #expect(key.hasPrefix("fy_live_"))
        // 8 symbols to find the row, then 22 (131 bits) that are never stored.
        #expect(key.utf8.count == 8 + 30 + 6)
        #expect(key.utf8.dropFirst(8).allSatisfy(Base62.contains))
        let parsed = try #require(APIKey.parse(key))
        #expect(parsed.lookupPrefix == String(key.dropFirst(8).prefix(8)))
        #expect(parsed.hash == APIKey.hash(key))
        #expect(parsed.hash.count == 32)
    }

    @Test func generationIsDrivenByTheGenerator() {
        var first = SplitMix64(seed: 7)
        var again = SplitMix64(seed: 7)
        var other = SplitMix64(seed: 8)
        let key = APIKey.generate(using: &first)
        #expect(APIKey.generate(using: &again) == key)
        #expect(APIKey.generate(using: &other) != key)
        #expect(APIKey.generate(using: &first) != key)
    }

    @Test func everySingleSymbolChangeIsRejected() throws {
        let symbols = Array(knownKey.utf8)
        for position in 8..<symbols.count {
            var altered = symbols
            altered[position] = symbols[position] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
            #expect(APIKey.parse(String(decoding: altered, as: UTF8.self)) == nil, "position \(position)")
        }
    }

    @Test(arguments: [
        "", "fy_live_", "fy_test_Ferry0123456789abcdefg3EyfXE", "Fy_live_Ferry0123456789abcdefg3EyfXE",
        "fy_live_Ferry0123456789abcdefg3EyfX", "fy_live_Ferry0123456789abcdefg3EyfXEE",
        "fy_live_Ferry0123456789abcdef-3EyfXE", "fy_live_Ferry0123456789abcdefé3EyfX",
        " fy_live_Ferry0123456789abcdefg3EyfXE", "Bearer fy_live_Ferry0123456789abcdefg3EyfXE",
        "fy_admin_Ferry0123456789abcdefg3EyfXE",
    ])
    func malformedKeysAreRejected(presented: String) {
        #expect(APIKey.parse(presented) == nil)
    }

    @Test func adminTokensAndAPIKeysAreNotInterchangeable() throws {
        var generator = SplitMix64(seed: 1)
        let token = AdminToken.generate(using: &generator)
        #expect(token.hasPrefix("fy_admin_"))
        #expect(token.utf8.count == 9 + 30 + 6)
        let parsed = try #require(AdminToken.parse(token))
        #expect(parsed.hash == AdminToken.hash(token))
        #expect(APIKey.parse(token) == nil)
        #expect(AdminToken.parse(APIKey.generate(using: &generator)) == nil)
        #expect(AdminToken.parse("fy_admin_Ferry0123456789abcdefg3EyfXE")?.lookupPrefix == "Ferry012")
    }

    @Test func constantTimeEqualsComparesContent() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(constantTimeEquals([], []))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([0, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(!constantTimeEquals([1, 2], [1, 2, 3]))
    }
}

@Suite("ResourceID")
struct SecurityResourceIDTests {
    @Test func hasPrefixAndTwentyFourBase62Symbols() {
        var generator = SplitMix64(seed: 3)
        let id = ResourceID.make(prefix: "tsk", using: &generator)
        #expect(id.hasPrefix("tsk_"))
        #expect(id.utf8.count == 4 + 24)
        #expect(id.utf8.dropFirst(4).allSatisfy(Base62.contains))
    }

    @Test func idsDoNotRepeat() {
        var generator = SplitMix64(seed: 4)
        let ids = (0..<1000).map { _ in ResourceID.make(prefix: "evt", using: &generator) }
        #expect(Set(ids).count == 1000)
    }

    @Test func symbolsAreSpreadOverTheWholeAlphabet() {
        var generator = SplitMix64(seed: 5)
        var seen = Set<UInt8>()
        for _ in 0..<200 {
            seen.formUnion(ResourceID.make(prefix: "x", using: &generator).utf8.dropFirst(2))
        }
        #expect(seen.count == 62)
    }

    @Test func symbolsAreEquallyLikely() {
        var generator = SplitMix64(seed: 6)
        var counts = [UInt8: Int]()
        for byte in Base62.randomString(length: 62_000, using: &generator).utf8 {
            counts[byte, default: 0] += 1
        }
        // 1000 expected each; a biased draw (bytes modulo 62) would give the first eight ~1.2×.
        #expect(counts.values.allSatisfy { (880...1120).contains($0) })
    }

    @Test func bytesThatWouldBiasTheDrawAreSkipped() {
        struct Scripted: RandomNumberGenerator {
            var draws: [UInt64]
            mutating func next() -> UInt64 { draws.removeFirst() }
        }
        // Every byte of the first draw is 255 (≥ 248): none may become a symbol.
        var generator = Scripted(draws: [.max, 0x3E3D_0100])
        #expect(Base62.randomString(length: 4, using: &generator) == "01z0")
        #expect(generator.draws.isEmpty)
    }
}
