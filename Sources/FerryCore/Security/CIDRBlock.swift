/// A network in CIDR notation (`127.0.0.0/8`, `::1/128`, `fd00::/8`).
public struct CIDRBlock: Hashable, Sendable {
    /// The first address of the block (all host bits zero).
    public let network: NetworkAddress
    /// Leading bits that every address of the block shares: 0–32 for IPv4, 0–128 for IPv6.
    public let prefixLength: Int

    /// Parses `address/prefix`; a bare address is a block of one (`/32` or `/128`).
    /// Host bits must be zero: `10.0.0.1/8` is refused rather than silently widened or narrowed,
    /// because this text decides what the service may connect to.
    public init(_ text: String) throws(AddressPolicyError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = NetworkAddress(String(parts[0])) else {
            throw .invalidNetwork(text, reason: "not an IPv4 or IPv6 address")
        }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.count <= 3,
                  digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let parsed = Int(digits), parsed <= maximum
            else {
                throw .invalidNetwork(text, reason: "the prefix length must be a number from 0 to \(maximum)")
            }
            length = parsed
        }
        let block = CIDRBlock(masking: address, prefixLength: length)
        guard block.network == address else {
            throw .invalidNetwork(text, reason: "host bits are set; did you mean \(block)?")
        }
        self = block
    }

    /// The block of `prefixLength` bits that contains `address` (host bits cleared).
    /// `prefixLength` is clamped to the address family's range.
    public init(masking address: NetworkAddress, prefixLength: Int) {
        let length = min(max(prefixLength, 0), address.bytes.count * 8)
        let masked = address.bytes.enumerated().map { index, byte in byte & Self.mask(byteIndex: index, prefixLength: length) }
        // Same length as the input, so this cannot fail.
        self.network = NetworkAddress(bytes: masked) ?? address
        self.prefixLength = length
    }

    /// Whether `address` lies in this block. Addresses of the other family never do
    /// (the address policy unwraps IPv4-mapped IPv6 addresses before asking).
    public func contains(_ address: NetworkAddress) -> Bool {
        guard address.family == network.family else { return false }
        for index in address.bytes.indices {
            let mask = Self.mask(byteIndex: index, prefixLength: prefixLength)
            if address.bytes[index] & mask != network.bytes[index] { return false }
        }
        return true
    }

    private static func mask(byteIndex: Int, prefixLength: Int) -> UInt8 {
        let bits = min(max(prefixLength - byteIndex * 8, 0), 8)
        return bits == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
    }
}

extension CIDRBlock: CustomStringConvertible {
    public var description: String { "\(network)/\(prefixLength)" }
}
