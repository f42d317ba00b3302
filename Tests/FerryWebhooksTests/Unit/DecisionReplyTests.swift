import FerryCore
import Testing

@testable import FerryWebhooks

@Suite("Decision replies are read defensively")
struct DecisionReplyTests {
    private func parse(_ status: Int?, _ text: String, truncated: Bool = false) -> JSONValue? {
        DecisionReply.parse(statusCode: status, body: Array(text.utf8), isTruncated: truncated)
    }

    @Test func aTwoHundredWithAJSONObjectCounts() {
        #expect(parse(200, #"{"disposition": "allow"}"#) == ["disposition": "allow"])
        #expect(parse(201, #"{"request": null}"#) == ["request": nil])
    }

    @Test func anythingElseMeansTheDefault() {
        #expect(parse(500, #"{"disposition": "allow"}"#) == nil)
        #expect(parse(302, #"{"disposition": "allow"}"#) == nil)
        #expect(parse(nil, "") == nil)
        #expect(parse(200, "") == nil)
        #expect(parse(200, "allow") == nil)
        #expect(parse(200, #"["allow"]"#) == nil)
        #expect(parse(200, #""allow""#) == nil)
        #expect(parse(200, #"{"disposition": "allow""#) == nil)
        #expect(parse(200, #"{"disposition": "allow"}"#, truncated: true) == nil)
        #expect(parse(200, String(repeating: "[", count: 100) + String(repeating: "]", count: 100)) == nil)
    }

    @Test func rejectionsNeverQuoteTheReply() {
        let reply = #"{"password": "hunter2"#
        let reason = DecisionReply.rejection(statusCode: 200, body: Array(reply.utf8), isTruncated: false)
        #expect(reason == "the reply is not a JSON object")
        #expect(!reason.contains("hunter2"))
        #expect(DecisionReply.rejection(statusCode: 503, body: [], isTruncated: false) == "answered 503")
    }
}
