/// SAFETY.md's deny list, exactly: what Ferry refuses to connect to unless allowed.
extension AddressPolicy {
    struct DeniedRange: Sendable {
        let block: CIDRBlock
        let range: BlockedRange
    }

    private static func ipv4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ length: Int, _ range: BlockedRange) -> DeniedRange {
        DeniedRange(block: CIDRBlock(masking: NetworkAddress(ipv4: a, b, c, 0), prefixLength: length), range: range)
    }

    private static func ipv6(_ groups: [UInt16], _ length: Int, _ range: BlockedRange) -> DeniedRange {
        DeniedRange(block: CIDRBlock(masking: NetworkAddress(ipv6Groups: groups), prefixLength: length), range: range)
    }

    static let deniedIPv4: [DeniedRange] = [
        ipv4(0, 0, 0, 8, .unspecified),             // "this network"; 0.0.0.0 reaches the local host on Linux
        ipv4(10, 0, 0, 8, .privateNetwork),
        ipv4(100, 64, 0, 10, .carrierGradeNAT),
        ipv4(127, 0, 0, 8, .loopback),
        ipv4(169, 254, 0, 16, .linkLocal),          // includes cloud metadata at 169.254.169.254
        ipv4(172, 16, 0, 12, .privateNetwork),
        ipv4(192, 0, 0, 24, .protocolAssignments),
        ipv4(192, 0, 2, 24, .documentation),        // TEST-NET-1
        ipv4(192, 88, 99, 24, .relayAnycast),
        ipv4(192, 168, 0, 16, .privateNetwork),
        ipv4(198, 18, 0, 15, .benchmarking),
        ipv4(198, 51, 100, 24, .documentation),     // TEST-NET-2
        ipv4(203, 0, 113, 24, .documentation),      // TEST-NET-3
        ipv4(224, 0, 0, 4, .multicast),
        ipv4(240, 0, 0, 4, .reserved),              // includes 255.255.255.255 broadcast
    ]

    /// Named IPv6 ranges, most specific first. Anything else outside 2000::/3 is refused as
    /// `.outsideGlobalUnicast`; the ones named here only get a clearer reason.
    static let deniedIPv6: [DeniedRange] = [
        ipv6([], 128, .unspecified),                // ::
        ipv6([0, 0, 0, 0, 0, 0, 0, 1], 128, .loopback), // ::1
        ipv6([0x64, 0xff9b], 96, .nat64),           // 64:ff9b::/96 reaches IPv4 through a translator
        ipv6([0xfe80], 10, .linkLocal),
        ipv6([0xfc00], 7, .privateNetwork),         // unique local addresses
        ipv6([0xff00], 8, .multicast),
        ipv6([0x2001, 0x0db8], 32, .documentation),
        ipv6([0x2001, 0x0000], 32, .teredo),        // tunnels to an IPv4 address
        ipv6([0x2002], 16, .sixToFour),             // embeds an IPv4 address
    ]

    static let globalUnicast = CIDRBlock(masking: NetworkAddress(ipv6Groups: [0x2000]), prefixLength: 3)
}
