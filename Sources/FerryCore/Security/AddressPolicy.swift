/// Decides whether Ferry may connect to an address: the SSRF guard for transfers and webhooks.
///
/// It judges the address curl is about to connect to (after DNS, on every redirect), never the
/// URL text. Everything in a special-purpose range (SAFETY.md's list) is refused unless the
/// operator allowed a network that contains it (`FERRY_ALLOW_NETWORKS=127.0.0.0/8` is how tests
/// reach a local origin). IPv4-mapped and IPv4-compatible IPv6 addresses are judged as the IPv4
/// address they carry, for the allow list as well as the deny list.
public struct AddressPolicy: Sendable {
    /// Networks the operator allowed even though they lie in a refused range.
    public let allowedNetworks: [CIDRBlock]

    public init(allowedNetworks: [CIDRBlock]) {
        self.allowedNetworks = allowedNetworks
    }

    /// Reads `FERRY_ALLOW_NETWORKS`: CIDR blocks (or single addresses) separated by commas
    /// and/or whitespace. An empty text allows nothing extra.
    public static func parseAllowList(_ text: String) throws(AddressPolicyError) -> [CIDRBlock] {
        let entries = text.split { $0 == "," || $0.isWhitespace }
        var blocks: [CIDRBlock] = []
        for entry in entries {
            blocks.append(try CIDRBlock(String(entry)))
        }
        return blocks
    }

    public func evaluate(_ address: NetworkAddress) -> AddressVerdict {
        let judged = address.embeddedIPv4 ?? address
        if allowedNetworks.contains(where: { $0.contains(judged) || $0.contains(address) }) {
            return .allowed
        }
        if let range = Self.blockedRange(of: judged) {
            return .refused(range: range)
        }
        return .allowed
    }

    /// The special-purpose range `address` belongs to, or `nil` for a public unicast address.
    /// Does not unwrap IPv4-mapped addresses; `evaluate(_:)` does that first.
    public static func blockedRange(of address: NetworkAddress) -> BlockedRange? {
        switch address.family {
        case .ipv4:
            return deniedIPv4.first { $0.block.contains(address) }?.range
        case .ipv6:
            if let match = deniedIPv6.first(where: { $0.block.contains(address) }) {
                return match.range
            }
            return globalUnicast.contains(address) ? nil : .outsideGlobalUnicast
        }
    }
}

/// The outcome of `AddressPolicy.evaluate(_:)`.
public enum AddressVerdict: Equatable, Sendable {
    case allowed
    case refused(range: BlockedRange)
}

extension AddressVerdict {
    /// The explanation a task's error (or a webhook attempt) carries when the connection was
    /// refused, e.g. "refused by policy: the server's address is loopback and not in
    /// FERRY_ALLOW_NETWORKS"; `nil` when the address was allowed. Tenants read it: it names the
    /// kind of range, never the address a name resolved to inside Ferry's network.
    public var refusalReason: String? {
        guard case .refused(let range) = self else { return nil }
        return "\(TransferError.policyRefusalPrefix): the server's address is \(range) and not in FERRY_ALLOW_NETWORKS"
    }

    /// The refusal of an address that is not IP (nothing else should reach the guard).
    public static let nonIPRefusalReason = "\(TransferError.policyRefusalPrefix): the server's address is not an IP address"
}
