import FerryCore
import Testing

@Suite("Strict JSON for request bodies")
struct JSONParserTests {
    @Test("valid documents parse", arguments: [
        (#"{"a": [1, -2.5e3, true, false, null, "x\n\u00e9\ud83d\ude00"]}"#, true),
        ("  [ ]  ", true),
        ("0", true),
    ])
    func valid(text: String, ok: Bool) throws {
        _ = try JSONValue.parse(Array(text.utf8))
    }

    @Test("unicode escapes and surrogate pairs decode")
    func escapes() throws {
        #expect(try JSONValue.parse(Array(#""\u00e9\ud83d\ude00\/""#.utf8)) == .string("é😀/"))
    }

    @Test("what lenient parsers let through is refused", arguments: [
        #"{"a": 1,}"#, #"[1, 2,]"#, "\u{FEFF}{}", #"{"a": 01}"#, #"{"a": .5}"#, #"{"a": +1}"#, #"{"a": NaN}"#,
        #"{'a': 1}"#, #"{"a": "\ud800"}"#, "{\"a\": \"tab\u{09}in string\"}", "{} {}", "// comment\n{}", #"{"a" 1}"#, "",
    ])
    func refused(text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(Array(text.utf8)) }
    }

    @Test("a member given twice is refused, naming it by its path")
    func duplicates() {
        do {
            _ = try JSONValue.parse(Array(#"{"request": {"headers": [{"x": 1, "x": 2}]}}"#.utf8))
            Issue.record("accepted a duplicate member")
        } catch let error as JSONSyntaxError {
            #expect(error.field == "request.headers.[0].x")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("nesting is bounded")
    func depth() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(Array(deep.utf8)) }
        let fine = String(repeating: "[", count: 30) + String(repeating: "]", count: 30)
        #expect(throws: Never.self) { try JSONValue.parse(Array(fine.utf8)) }
    }
}
