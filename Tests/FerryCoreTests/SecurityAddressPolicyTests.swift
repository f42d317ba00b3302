import Testing

@testable import FerryCore

@Suite("AddressPolicy")
struct SecurityAddressPolicyTests {
    private let strict = AddressPolicy(allowedNetworks: [])

    private func verdict(_ text: String, policy: AddressPolicy? = nil) throws -> AddressVerdict {
        (policy ?? strict).evaluate(try #require(NetworkAddress(text)))
    }

    /// Every IPv4 range of SAFETY.md, checked at its first and last address.
    @Test(arguments: [
        ("0.0.0.0", "0.255.255.255", BlockedRange.unspecified),
        ("10.0.0.0", "10.255.255.255", .privateNetwork),
        ("100.64.0.0", "100.127.255.255", .carrierGradeNAT),
        ("127.0.0.0", "127.255.255.255", .loopback),
        ("169.254.0.0", "169.254.255.255", .linkLocal),
        ("172.16.0.0", "172.31.255.255", .privateNetwork),
        ("192.0.0.0", "192.0.0.255", .protocolAssignments),
        ("192.0.2.0", "192.0.2.255", .documentation),
        ("192.88.99.0", "192.88.99.255", .relayAnycast),
        ("192.168.0.0", "192.168.255.255", .privateNetwork),
        ("198.18.0.0", "198.19.255.255", .benchmarking),
        ("198.51.100.0", "198.51.100.255", .documentation),
        ("203.0.113.0", "203.0.113.255", .documentation),
        ("224.0.0.0", "239.255.255.255", .multicast),
        ("240.0.0.0", "255.255.255.255", .reserved),
    ])
    func refusesEveryDeniedIPv4Range(first: String, last: String, range: BlockedRange) throws {
        #expect(try verdict(first) == .refused(range: range))
        #expect(try verdict(last) == .refused(range: range))
    }

    @Test(arguments: [
        "1.0.0.0", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255",
        "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.255",
        "192.0.3.0", "192.88.98.255", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0",
        "198.51.99.255", "203.0.112.255", "223.255.255.255",
    ])
    func allowsPublicIPv4JustOutsideTheRanges(text: String) throws {
        #expect(try verdict(text) == .allowed)
    }

    @Test(arguments: [
        ("::", BlockedRange.unspecified),
        ("::1", .loopback),
        ("fe80::1", .linkLocal),
        ("febf:ffff::1", .linkLocal),
        ("fc00::1", .privateNetwork),
        ("fd12:3456::1", .privateNetwork),
        ("ff02::1", .multicast),
        ("2001:db8::1", .documentation),
        ("2001::1", .teredo),
        ("2001:0:ffff::1", .teredo),
        ("2002:c000:0204::1", .sixToFour),
        ("64:ff9b::7f00:1", .nat64),
        ("4000::1", .outsideGlobalUnicast),
        ("fec0::1", .outsideGlobalUnicast),
        ("100::1", .outsideGlobalUnicast),
        ("::2:0:0:1", .outsideGlobalUnicast),
        // IPv4-mapped and IPv4-compatible addresses are judged as the IPv4 address they carry.
        ("::ffff:127.0.0.1", .loopback),
        ("::ffff:10.0.0.1", .privateNetwork),
        ("::ffff:169.254.169.254", .linkLocal),
        ("::127.0.0.1", .loopback),
        ("::0.0.0.2", .unspecified),
        ("::192.168.1.1", .privateNetwork),
    ])
    func refusesSpecialIPv6(text: String, range: BlockedRange) throws {
        #expect(try verdict(text) == .refused(range: range))
    }

    @Test(arguments: ["2606:4700:4700::1111", "2a00:1450:4001::200e", "2001:1::1", "2001:db9::1", "3fff:ffff::1", "::ffff:8.8.8.8", "::8.8.8.8"])
    func allowsGlobalIPv6(text: String) throws {
        #expect(try verdict(text) == .allowed)
    }

    @Test func allowListOpensDeniedRangesAndNothingElse() throws {
        let networks = try AddressPolicy.parseAllowList("127.0.0.0/8, ::1/128\n\t10.0.0.0/8")
        #expect(networks.map(\.description) == ["127.0.0.0/8", "::1/128", "10.0.0.0/8"])
        let policy = AddressPolicy(allowedNetworks: networks)

        #expect(try verdict("127.0.0.1", policy: policy) == .allowed)
        #expect(try verdict("::ffff:127.0.0.1", policy: policy) == .allowed)
        #expect(try verdict("::1", policy: policy) == .allowed)
        #expect(try verdict("10.20.30.40", policy: policy) == .allowed)
        #expect(try verdict("192.168.1.1", policy: policy) == .refused(range: .privateNetwork))
        #expect(try verdict("169.254.169.254", policy: policy) == .refused(range: .linkLocal))
        #expect(try verdict("fe80::1", policy: policy) == .refused(range: .linkLocal))
    }

    @Test func allowListMayNameASingleAddress() throws {
        let policy = AddressPolicy(allowedNetworks: try AddressPolicy.parseAllowList("192.168.1.10"))
        #expect(try verdict("192.168.1.10", policy: policy) == .allowed)
        #expect(try verdict("192.168.1.11", policy: policy) == .refused(range: .privateNetwork))
    }

    @Test func emptyAllowListAllowsNothingExtra() throws {
        #expect(try AddressPolicy.parseAllowList("").isEmpty)
        #expect(try AddressPolicy.parseAllowList(" ,\n, ").isEmpty)
    }

    @Test func badAllowListEntryIsNamed() {
        do {
            _ = try AddressPolicy.parseAllowList("127.0.0.0/8,banana, 10.0.0.0/8")
            Issue.record("a bad entry was accepted")
        } catch {
            #expect(error == .invalidNetwork("banana", reason: "not an IPv4 or IPv6 address"))
            #expect(error.description.contains("\"banana\""))
            #expect(error.description.contains("FERRY_ALLOW_NETWORKS"))
        }
    }

    @Test func refusalReasonNamesTheRangeNotTheAddress() throws {
        let address = try #require(NetworkAddress("10.1.2.3"))
        let verdict = strict.evaluate(address)
        #expect(verdict.refusalReason == "refused by policy: the server's address is private and not in FERRY_ALLOW_NETWORKS")
        #expect(verdict.refusalReason?.contains("10.1.2.3") == false)
        #expect(AddressVerdict.allowed.refusalReason == nil)
    }

    @Test func deniedTableIsExactlySafetyList() {
        #expect(AddressPolicy.deniedIPv4.map(\.block.description) == [
            "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
            "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
            "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
        ])
        #expect(AddressPolicy.deniedIPv6.map(\.block.description) == [
            "::/128", "::1/128", "64:ff9b::/96", "fe80::/10", "fc00::/7", "ff00::/8",
            "2001:db8::/32", "2001::/32", "2002::/16",
        ])
        #expect(AddressPolicy.globalUnicast.description == "2000::/3")
    }
}
