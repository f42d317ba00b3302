import Crypto

/// What a tenant sees of an event's place in the log: its `position`, the `?after=` cursor and
/// the Server-Sent Events `id`.
///
/// The log's own positions come from one sequence shared by every tenant, so two of a tenant's
/// events that are 500 positions apart tell it that others wrote about 500 events in between: a
/// tenant could count another's activity. Shown instead is the position through a keyed
/// permutation, a different one per tenant: a whole number that leads back to exactly one
/// position, but whose value says nothing about any other event's. It is an opaque cursor and
/// is not ordered; the lists and the stream give events in log order.
///
/// The permutation is a six-round Feistel network over 52 bits whose round function is
/// HMAC-SHA256 under the tenant's key (a pseudo-random permutation: Luby–Rackoff needs four).
/// 52 bits keep the number exact in every JSON reader (JavaScript's are doubles). The position
/// fills the upper 44 bits (17.6 × 10¹² events: 55 years at 10,000 a second) and the lower 8
/// are zero, so that a number that was never a cursor is refused 255 times in 256 instead of
/// quietly starting somewhere in the log. 0 stays 0: "from the beginning".
public struct EventCursor: Sendable {
    /// The tenant's key (SymmetricKey is not Sendable: made from these bytes for each use).
    private let key: [UInt8]

    init(key: [UInt8]) {
        self.key = key
    }

    /// The largest position a cursor can carry.
    public static let maximumPosition: Int64 = (1 << 44) - 1

    static let checkBits = 8
    static let halfBits = 26
    static let halfMask: UInt64 = (1 << 26) - 1
    static let rounds = 6

    /// The cursor that stands for `position` (at most `maximumPosition`; 0 for 0).
    public func encode(_ position: Int64) -> Int64 {
        guard position > 0 else { return 0 }
        let block = (UInt64(position) & UInt64(Self.maximumPosition)) << Self.checkBits
        var left = block >> Self.halfBits
        var right = block & Self.halfMask
        let key = SymmetricKey(data: key)
        for round in 0..<Self.rounds {
            (left, right) = (right, left ^ Self.scramble(right, round: round, key: key))
        }
        return Int64(bitPattern: left << Self.halfBits | right)
    }

    /// The position a cursor stands for; nil when `cursor` is not one this tenant was given.
    public func decode(_ cursor: Int64) -> Int64? {
        guard cursor != 0 else { return 0 }
        guard cursor > 0, cursor >> (2 * Self.halfBits) == 0 else { return nil }
        var left = UInt64(cursor) >> Self.halfBits
        var right = UInt64(cursor) & Self.halfMask
        let key = SymmetricKey(data: key)
        for round in (0..<Self.rounds).reversed() {
            (left, right) = (right ^ Self.scramble(left, round: round, key: key), left)
        }
        let block = left << Self.halfBits | right
        guard block & ((1 << Self.checkBits) - 1) == 0 else { return nil }
        let position = Int64(block >> Self.checkBits)
        return position > 0 ? position : nil
    }

    /// The round function: 26 bits of HMAC-SHA256(key, round ‖ half).
    private static func scramble(_ half: UInt64, round: Int, key: SymmetricKey) -> UInt64 {
        let message: [UInt8] = [UInt8(round), UInt8(half >> 24 & 0xff), UInt8(half >> 16 & 0xff), UInt8(half >> 8 & 0xff), UInt8(half & 0xff)]
        let code = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return code.withUnsafeBytes { bytes in
            (UInt64(bytes[0]) << 24 | UInt64(bytes[1]) << 16 | UInt64(bytes[2]) << 8 | UInt64(bytes[3])) & Self.halfMask
        }
    }
}

/// The installation's event cursors: one key, kept in the database like the resume-data key, so
/// that every instance shows a tenant the same cursors, and each tenant's permutation derived
/// from it.
public struct EventCursors: Sendable {
    private let key: [UInt8]

    public init(key: [UInt8]) {
        self.key = key
    }

    public func forTenant(_ tenantID: String) -> EventCursor {
        let label = Array("ferry event cursor v1\u{0}\(tenantID)".utf8)
        return EventCursor(key: Array(HMAC<SHA256>.authenticationCode(for: label, using: SymmetricKey(data: key))))
    }
}
