/// An IPv4 or IPv6 address as raw network-order bytes: the form a resolver or
/// `CURLOPT_OPENSOCKETFUNCTION` hands over, and the form the address policy judges.
///
/// Text is accepted only in strict forms (see `init?(_ text:)`): the policy must judge exactly
/// the address that will be connected to, not a lenient reading of it.
public struct NetworkAddress: Hashable, Sendable {
    public enum Family: Hashable, Sendable {
        case ipv4
        case ipv6
    }

    /// 4 bytes for IPv4, 16 for IPv6, most significant first.
    public let bytes: [UInt8]

    /// An address from 4 (IPv4) or 16 (IPv6) bytes in network order; `nil` for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var family: Family {
        bytes.count == 4 ? .ipv4 : .ipv6
    }

    /// The IPv4 address an IPv6 address carries, if it is IPv4-mapped (`::ffff:0:0/96`) or
    /// IPv4-compatible (`::/96`, except `::` and `::1`, which are IPv6's own unspecified and
    /// loopback addresses). The kernel may deliver a connection to such an address to the IPv4
    /// host it names, so the policy judges it as that IPv4 address.
    public var embeddedIPv4: NetworkAddress? {
        guard family == .ipv6, bytes[0..<10].allSatisfy({ $0 == 0 }) else { return nil }
        let tail = Array(bytes[12..<16])
        switch (bytes[10], bytes[11]) {
        case (0xFF, 0xFF):
            return NetworkAddress(bytes: tail)
        case (0, 0):
            let isUnspecifiedOrLoopback = tail[0..<3].allSatisfy { $0 == 0 } && tail[3] <= 1
            return isUnspecifiedOrLoopback ? nil : NetworkAddress(bytes: tail)
        default:
            return nil
        }
    }
}

extension NetworkAddress: CustomStringConvertible {
    /// Canonical text: dotted decimal for IPv4; RFC 5952 for IPv6 (lower case, no leading zeros,
    /// the longest run of two or more zero groups shortened to `::`, IPv4-mapped addresses as
    /// `::ffff:a.b.c.d`).
    public var description: String {
        switch family {
        case .ipv4:
            return bytes.map(String.init).joined(separator: ".")
        case .ipv6:
            return ipv6Description
        }
    }

    private var ipv6Description: String {
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return "::ffff:" + bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        let run = Self.longestZeroRun(in: groups)
        func hex(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard let run else { return hex(0..<8) }
        return hex(0..<run.lowerBound) + "::" + hex(run.upperBound..<8)
    }

    /// The first longest run of at least two zero groups (RFC 5952 §4.2).
    private static func longestZeroRun(in groups: [UInt16]) -> Range<Int>? {
        var best: Range<Int>?
        var start: Int?
        for index in 0...groups.count {
            if index < groups.count, groups[index] == 0 {
                if start == nil { start = index }
                continue
            }
            if let runStart = start {
                let run = runStart..<index
                if run.count >= 2, run.count > (best?.count ?? 0) { best = run }
                start = nil
            }
        }
        return best
    }
}

extension NetworkAddress {
    /// The IPv4 address `a.b.c.d`.
    public init(ipv4 a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        self.bytes = [a, b, c, d]
    }

    /// The IPv6 address whose leading 16-bit groups are `groups` and whose remaining groups are
    /// zero (so `[0xfe80]` is `fe80::`). Groups past the eighth are ignored.
    init(ipv6Groups groups: [UInt16]) {
        var bytes = [UInt8](repeating: 0, count: 16)
        for (index, group) in groups.prefix(8).enumerated() {
            bytes[2 * index] = UInt8(group >> 8)
            bytes[2 * index + 1] = UInt8(group & 0xFF)
        }
        self.bytes = bytes
    }
}
