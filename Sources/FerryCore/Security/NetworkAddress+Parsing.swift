import Foundation

extension NetworkAddress {
    /// Parses an address written as text: dotted decimal IPv4 (`10.0.0.1`; exactly four decimal
    /// parts, no leading zeros, because `010` means 8 to some parsers and 10 to others), or IPv6
    /// (`::1`, `fd00::1`, `::ffff:1.2.3.4`). Zone ids (`fe80::1%eth0`) and brackets are refused.
    public init?(_ text: String) {
        if text.contains(":") {
            guard let bytes = Self.parseIPv6(Substring(text)) else { return nil }
            self.bytes = bytes
        } else {
            guard let bytes = Self.parseIPv4(Substring(text)) else { return nil }
            self.bytes = bytes
        }
    }

    static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count),
                  part.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  part.count == 1 || part.first != "0",
                  let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    static func parseIPv6(_ text: Substring) -> [UInt8]? {
        // At most one "::"; split into the groups before and after it.
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        guard let head = parseGroups(Substring(halves[0]), allowsTrailingIPv4: halves.count == 1) else { return nil }
        if halves.count == 1 {
            return head.count == 16 ? head : nil
        }
        guard let tail = parseGroups(Substring(halves[1]), allowsTrailingIPv4: true) else { return nil }
        // "::" stands for at least one zero group.
        guard head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }

    /// Colon-separated hex groups (1–4 digits each), optionally ending in a dotted IPv4 address.
    /// An empty string is zero groups.
    private static func parseGroups(_ text: Substring, allowsTrailingIPv4: Bool) -> [UInt8]? {
        guard !text.isEmpty else { return [] }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var bytes: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if index == parts.count - 1, allowsTrailingIPv4, part.contains(".") {
                guard let ipv4 = parseIPv4(part) else { return nil }
                bytes += ipv4
                continue
            }
            guard (1...4).contains(part.count),
                  part.utf8.allSatisfy(Self.isASCIIHexDigit),
                  let value = UInt16(part, radix: 16)
            else { return nil }
            bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
        }
        return bytes
    }

    private static func isASCIIHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
            return true
        default:
            return false
        }
    }
}
