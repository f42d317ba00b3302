import Testing

@testable import FerryCore

@Suite("ResumedRange")
struct ResumedRangeTests {
    /// `bytes 500-599/1000`, appended to a file of 500 bytes.
    private let partOfKnownTotal = ResumedRange(range: 500...599, completeLength: 1000)

    @Test func admitsBytesUpToTheRangesLastByte() {
        #expect(partOfKnownTotal.admits(100, fileLength: 500))
        #expect(partOfKnownTotal.admits(1, fileLength: 599))
        #expect(partOfKnownTotal.admits(0, fileLength: 600))
        #expect(!partOfKnownTotal.admits(101, fileLength: 500))
        #expect(!partOfKnownTotal.admits(1, fileLength: 600))
    }

    @Test func aBodyThatStopsInsideItsRangeIsShortOfIt() {
        #expect(partOfKnownTotal.end(fileLength: 500) == .shortOfRange)
        #expect(partOfKnownTotal.end(fileLength: 599) == .shortOfRange)
        #expect(ResumedRange(range: 500...999, completeLength: 1000).end(fileLength: 999) == .shortOfRange)
    }

    @Test func aWholeRangeThatStopsBeforeTheTotalIsShortOfIt() {
        #expect(partOfKnownTotal.end(fileLength: 600) == .shortOfTotal)
    }

    @Test func aWholeRangeToTheTotalCompletesTheFile() {
        #expect(ResumedRange(range: 500...999, completeLength: 1000).end(fileLength: 1000) == .complete)
        #expect(ResumedRange(range: 500...500, completeLength: 501).end(fileLength: 501) == .complete)
    }

    @Test func boundsAsLargeAsAServerCanWriteDoNotOverflow() {
        let endless = ResumedRange(range: 0...Int64.max, completeLength: nil)
        #expect(endless.admits(Int.max, fileLength: 0))
        #expect(endless.end(fileLength: 0) == .shortOfRange)
        #expect(ResumedRange(range: 5...Int64.max, completeLength: Int64.max).end(fileLength: 5) == .shortOfRange)
    }
}
