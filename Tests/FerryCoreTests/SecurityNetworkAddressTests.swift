import Testing

@testable import FerryCore

@Suite("NetworkAddress")
struct SecurityNetworkAddressTests {
    @Test(arguments: [
        ("10.0.0.1", [10, 0, 0, 1]),
        ("0.0.0.0", [0, 0, 0, 0]),
        ("255.255.255.255", [255, 255, 255, 255]),
        ("::", [UInt8](repeating: 0, count: 16)),
        ("::1", [UInt8](repeating: 0, count: 15) + [1]),
        ("::ffff:1.2.3.4", [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 1, 2, 3, 4]),
        ("0:0:0:0:0:ffff:1.2.3.4", [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 1, 2, 3, 4]),
        ("2001:db8::1", [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]),
        ("fe80::", [0xFE, 0x80] + [UInt8](repeating: 0, count: 14)),
        ("1:2:3:4:5:6:7:8", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]),
        ("FD00::ABCD", [0xFD, 0x00] + [UInt8](repeating: 0, count: 12) + [0xAB, 0xCD]),
        ("1::2:3:4:5:6:7", [0, 1, 0, 0, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7]),
    ] as [(String, [UInt8])])
    func parsesText(text: String, bytes: [UInt8]) throws {
        let address = try #require(NetworkAddress(text))
        #expect(address.bytes == bytes)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.0.0.1", "01.2.3.4", "1.2.3.-1", " 1.2.3.4", "1.2.3.4 ",
        "0x7f.0.0.1", "2130706433", "１.2.3.4", "1..2.3",
        "1::2::3", ":::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::8", "1:2:3:4:5:6:7", "12345::",
        "g::1", "fe80::1%eth0", "[::1]", "::ffff:1.2.3", "1.2.3.4::", ":1::", "1::2:", "::ffff:01.2.3.4",
    ])
    func refusesMalformedText(text: String) {
        #expect(NetworkAddress(text) == nil)
    }

    @Test(arguments: [
        ("10.0.0.1", "10.0.0.1"),
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
        ("0:0:0:0:0:0:0:0", "::"),
        ("0:0:0:0:0:0:0:1", "::1"),
        ("1:0:0:0:0:0:0:0", "1::"),
        ("FE80::ABCD", "fe80::abcd"),
        ("0:0:0:0:0:ffff:102:304", "::ffff:1.2.3.4"),
    ])
    func describesCanonically(text: String, canonical: String) throws {
        let address = try #require(NetworkAddress(text))
        #expect(address.description == canonical)
        #expect(NetworkAddress(canonical) == address)
    }

    @Test func acceptsOnlyFourOrSixteenBytes() {
        #expect(NetworkAddress(bytes: [127, 0, 0, 1])?.family == .ipv4)
        #expect(NetworkAddress(bytes: [UInt8](repeating: 0, count: 16))?.family == .ipv6)
        #expect(NetworkAddress(bytes: [1, 2, 3]) == nil)
        #expect(NetworkAddress(bytes: [1, 2, 3, 4, 5]) == nil)
        #expect(NetworkAddress(bytes: []) == nil)
    }

    @Test(arguments: [
        ("::ffff:127.0.0.1", "127.0.0.1"),
        ("::127.0.0.1", "127.0.0.1"),
        ("::0.0.0.2", "0.0.0.2"),
        ("::ffff:0.0.0.0", "0.0.0.0"),
    ])
    func unwrapsEmbeddedIPv4(text: String, ipv4: String) throws {
        let address = try #require(NetworkAddress(text))
        #expect(address.embeddedIPv4 == NetworkAddress(ipv4))
    }

    @Test(arguments: ["::", "::1", "64:ff9b::1.2.3.4", "2002:102:304::", "127.0.0.1", "::1:0:0:1", "::fffe:1.2.3.4"])
    func hasNoEmbeddedIPv4(text: String) throws {
        let address = try #require(NetworkAddress(text))
        #expect(address.embeddedIPv4 == nil)
    }
}

@Suite("CIDRBlock")
struct SecurityCIDRBlockTests {
    @Test func containsAddressesOfItsPrefix() throws {
        let loopback = try CIDRBlock("127.0.0.0/8")
        #expect(loopback.contains(try #require(NetworkAddress("127.0.0.1"))))
        #expect(loopback.contains(try #require(NetworkAddress("127.255.255.255"))))
        #expect(!loopback.contains(try #require(NetworkAddress("128.0.0.0"))))
        #expect(!loopback.contains(try #require(NetworkAddress("126.255.255.255"))))
        #expect(!loopback.contains(try #require(NetworkAddress("::ffff:127.0.0.1"))))

        let v6Loopback = try CIDRBlock("::1/128")
        #expect(v6Loopback.contains(try #require(NetworkAddress("::1"))))
        #expect(!v6Loopback.contains(try #require(NetworkAddress("::2"))))

        let uniqueLocal = try CIDRBlock("fd00::/8")
        #expect(uniqueLocal.contains(try #require(NetworkAddress("fd12:3456::1"))))
        #expect(!uniqueLocal.contains(try #require(NetworkAddress("fc00::1"))))

        let oddPrefix = try CIDRBlock("100.64.0.0/10")
        #expect(oddPrefix.contains(try #require(NetworkAddress("100.127.255.255"))))
        #expect(!oddPrefix.contains(try #require(NetworkAddress("100.128.0.0"))))
    }

    @Test func zeroPrefixContainsItsWholeFamily() throws {
        let all = try CIDRBlock("0.0.0.0/0")
        #expect(all.contains(try #require(NetworkAddress("8.8.8.8"))))
        #expect(!all.contains(try #require(NetworkAddress("::1"))))
    }

    @Test func bareAddressIsABlockOfOne() throws {
        let block = try CIDRBlock("10.1.2.3")
        #expect(block.prefixLength == 32)
        #expect(block.description == "10.1.2.3/32")
        #expect(try CIDRBlock("::1").prefixLength == 128)
    }

    @Test func describesItself() throws {
        #expect(try CIDRBlock("2001:0DB8::/32").description == "2001:db8::/32")
        #expect(try CIDRBlock("172.16.0.0/12").description == "172.16.0.0/12")
    }

    @Test func refusesHostBitsWithASuggestion() {
        #expect(throws: AddressPolicyError.invalidNetwork("10.0.0.1/8", reason: "host bits are set; did you mean 10.0.0.0/8?")) {
            try CIDRBlock("10.0.0.1/8")
        }
    }

    @Test(arguments: ["10.0.0.0/33", "10.0.0.0/", "/8", "10.0.0.0/8/9", "::/129", "10.0.0.0/+8", "10.0.0.0/ 8", "banana", "10.0.0.0/0008", ""])
    func refusesMalformedBlocks(text: String) {
        #expect(throws: AddressPolicyError.self) { try CIDRBlock(text) }
    }

    @Test func masksWhenAskedTo() throws {
        let block = CIDRBlock(masking: try #require(NetworkAddress("192.168.77.9")), prefixLength: 16)
        #expect(block.description == "192.168.0.0/16")
    }
}
