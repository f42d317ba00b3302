import Testing

@testable import FerryCore

@Suite("Event cursors: the log's positions as each tenant sees them")
struct EventCursorTests {
    private let cursors = EventCursors(key: Array(0..<32))
    private let largestJSONInteger: Int64 = 1 << 53

    @Test("each position has one cursor, a whole number JSON keeps exact, and leads back to it")
    func roundTrip() {
        let cursor = cursors.forTenant("ten_a")
        let positions = Array(1...5_000) + [EventCursor.maximumPosition - 1, EventCursor.maximumPosition]
        let encoded = positions.map(cursor.encode)
        #expect(Set(encoded).count == positions.count)
        #expect(encoded.allSatisfy { $0 > 0 && $0 < largestJSONInteger })
        #expect(encoded.map(cursor.decode) == positions.map { Optional($0) })
        #expect(cursor.encode(0) == 0)
        #expect(cursor.decode(0) == 0)
    }

    /// Tenants keep cursors (`?after=`, `Last-Event-ID`) across upgrades: the permutation must
    /// never change. The values are from an independent implementation (Python's hmac).
    @Test("the cursors of a known key are the ones handed out before")
    func knownAnswers() {
        let cursor = cursors.forTenant("ten_a")
        #expect(cursor.encode(1) == 308_265_244_152_914)
        #expect(cursor.encode(2) == 3_149_679_278_168_531)
        #expect(cursor.encode(12_345) == 1_693_001_725_365_136)
        #expect(cursor.encode(EventCursor.maximumPosition) == 880_173_194_736_644)
        #expect(cursor.decode(1_693_001_725_365_136) == 12_345)
    }

    @Test("a tenant's cursors say nothing of the distance between positions, and another tenant's differ")
    func opaque() {
        let mine = cursors.forTenant("ten_a")
        let theirs = cursors.forTenant("ten_b")
        let positions = Array(Int64(1_000)...2_000)
        let encoded = positions.map(mine.encode)
        // Consecutive positions: the steps between their cursors are all over the place, and
        // their order is not the positions' (about half go down).
        let steps = zip(encoded, encoded.dropFirst()).map { $1 - $0 }
        #expect(Set(steps).count > 990)
        let downs = steps.filter { $0 < 0 }.count
        #expect(downs > 400 && downs < 600)
        #expect(zip(encoded, positions.map(theirs.encode)).filter { $0 == $1 }.count == 0)
    }

    @Test("a number that was never this tenant's cursor is refused, nearly always")
    func refusals() {
        let mine = cursors.forTenant("ten_a")
        let theirs = cursors.forTenant("ten_b")
        let positions = Array(Int64(1)...10_000)
        // Each number is wrong by one, or the same position as another tenant sees it: 1 in
        // 256 passes the check by chance.
        let wrongByOne = positions.map { mine.encode($0) + 1 }.filter { mine.decode($0) != nil }.count
        let others = positions.map(theirs.encode).filter { mine.decode($0) != nil }.count
        #expect(wrongByOne < 100)
        #expect(others < 100)
        #expect(mine.decode(-1) == nil)
        #expect(mine.decode(Int64.max) == nil)
        #expect(mine.decode(1 << 52) == nil)
    }
}
