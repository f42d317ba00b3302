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
/// quietly starting somewhere in the log (the routes also refuse a position past the log's
/// end). 0 stays 0: "from the beginning"; the one position the network would send to 0 is sent
/// where 0 itself goes instead (cycle walking: nothing else goes there).
public struct EventCursor: Sendable, CustomStringConvertible {
    /// HMAC-SHA256 under the tenant's key, its key already absorbed: each round starts from a
    /// copy. Setting up an HMAC from the key hashes two blocks and builds four arrays, and a
    /// cursor takes six rounds: set up for each, it was a quarter of the time to list deliveries.
    private let keyedRound: KeyedHMAC

    init(key: [UInt8]) {
        keyedRound = KeyedHMAC(HMAC<SHA256>(key: SymmetricKey(data: key)))
    }

    /// The largest position a cursor can carry.
    public static let maximumPosition: Int64 = (1 << 44) - 1

    static let checkBits = 8
    static let halfBits = 26
    static let halfMask: UInt64 = (1 << 26) - 1
    static let rounds = 6

    /// The cursor that stands for `position` (at most `maximumPosition`, whose bits above are
    /// dropped; 0 for 0).
    public func encode(_ position: Int64) -> Int64 {
        guard position > 0 else { return 0 }
        let block = (UInt64(position) & UInt64(Self.maximumPosition)) << Self.checkBits
        let cursor = permute(block)
        return Int64(cursor != 0 ? cursor : permute(0))
    }

    /// The position a cursor stands for; nil when `cursor` is not one this tenant was given.
    public func decode(_ cursor: Int64) -> Int64? {
        guard cursor != 0 else { return 0 }
        guard cursor > 0, cursor >> (2 * Self.halfBits) == 0 else { return nil }
        var block = unpermute(UInt64(cursor))
        if block == 0 { block = unpermute(0) }
        guard block & ((1 << Self.checkBits) - 1) == 0 else { return nil }
        let position = Int64(block >> Self.checkBits)
        return position > 0 ? position : nil
    }

    /// The Feistel network over 52 bits, forwards.
    private func permute(_ block: UInt64) -> UInt64 {
        var left = block >> Self.halfBits
        var right = block & Self.halfMask
        for round in 0..<Self.rounds {
            (left, right) = (right, left ^ scramble(right, round: round))
        }
        return left << Self.halfBits | right
    }

    /// The Feistel network over 52 bits, backwards.
    private func unpermute(_ block: UInt64) -> UInt64 {
        var left = block >> Self.halfBits
        var right = block & Self.halfMask
        for round in (0..<Self.rounds).reversed() {
            (left, right) = (right ^ scramble(left, round: round), left)
        }
        return left << Self.halfBits | right
    }

    /// Never the key, should a cursor be printed.
    public var description: String { "EventCursor" }

    /// The round function: 26 bits of HMAC-SHA256(key, round ‖ half).
    private func scramble(_ half: UInt64, round: Int) -> UInt64 {
        let message: [UInt8] = [UInt8(round), UInt8(half >> 24 & 0xff), UInt8(half >> 16 & 0xff), UInt8(half >> 8 & 0xff), UInt8(half & 0xff)]
        var mac = keyedRound.mac
        mac.update(data: message)
        let code = mac.finalize()
        return code.withUnsafeBytes { bytes in
            (UInt64(bytes[0]) << 24 | UInt64(bytes[1]) << 16 | UInt64(bytes[2]) << 8 | UInt64(bytes[3])) & Self.halfMask
        }
    }
}

/// An HMAC with its key absorbed, shared by the threads that copy it. Its hash states are
/// copy-on-write values: a copy that is updated gets state of its own, and the shared one is
/// never changed after `init` (what makes `@unchecked` sound; swift-crypto does not mark HMAC
/// Sendable).
private struct KeyedHMAC: @unchecked Sendable {
    let mac: HMAC<SHA256>

    init(_ mac: HMAC<SHA256>) {
        self.mac = mac
    }
}

/// The installation's event cursors: one key, kept in the database like the resume-data key, so
/// that every instance shows a tenant the same cursors, and each tenant's permutation derived
/// from it.
public struct EventCursors: Sendable, CustomStringConvertible {
    private let key: [UInt8]

    public init(key: [UInt8]) {
        self.key = key
    }

    public func forTenant(_ tenantID: String) -> EventCursor {
        let label = Array("ferry event cursor v1\u{0}\(tenantID)".utf8)
        return EventCursor(key: Array(HMAC<SHA256>.authenticationCode(for: label, using: SymmetricKey(data: key))))
    }

    /// Never the key, should the cursors be printed.
    public var description: String { "EventCursors" }
}
