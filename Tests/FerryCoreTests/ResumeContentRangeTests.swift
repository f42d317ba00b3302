import Testing

@testable import FerryCore

@Suite("Content-Range parsing")
struct ResumeContentRangeTests {
    @Test(arguments: [
        ("bytes 0-499/1000", ContentRange(range: 0...499, completeLength: 1000)),
        ("bytes 500-999/1000", ContentRange(range: 500...999, completeLength: 1000)),
        ("bytes 500-999/*", ContentRange(range: 500...999, completeLength: nil)),
        ("bytes */1000", ContentRange(range: nil, completeLength: 1000)),
        ("bytes */0", ContentRange(range: nil, completeLength: 0)),
        ("BYTES 1-2/3", ContentRange(range: 1...2, completeLength: 3)),
        ("  bytes 7-7/8\t", ContentRange(range: 7...7, completeLength: 8)),
        ("bytes 0-9223372036854775806/9223372036854775807", ContentRange(range: 0...9_223_372_036_854_775_806, completeLength: .max)),
    ])
    func parsesValidHeaders(header: String, expected: ContentRange) {
        #expect(ContentRange(header) == expected)
    }

    @Test(arguments: [
        "", "bytes", "bytes ", "bytes */*", "bytes 5-4/10", "bytes 0-10/10", "items 0-1/2", "bytes 0-1",
        "bytes -1-2/3", "bytes 0-1/2/3", "bytes a-b/c", "bytes 0-99999999999999999999/*", "bytes=0-1/2",
        "bytes 0 - 1/2", "bytes +0-1/2", "bytes 0-1/-2", "bytes 1-/2", "bytes -/2", "bytes */",
    ])
    func refusesMalformedHeaders(header: String) {
        #expect(ContentRange(header) == nil)
    }
}
