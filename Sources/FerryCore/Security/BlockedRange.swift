/// The reason an address is refused: the special-purpose range it belongs to.
/// `description` is the name a person reads in a task's error
/// ("127.0.0.1 is loopback and not in FERRY_ALLOW_NETWORKS").
public enum BlockedRange: String, Hashable, Sendable, CaseIterable {
    case unspecified = "unspecified"
    case loopback = "loopback"
    case privateNetwork = "private"
    case carrierGradeNAT = "carrier-grade NAT"
    case linkLocal = "link-local"
    case protocolAssignments = "IETF protocol assignments"
    case documentation = "documentation"
    case relayAnycast = "6to4 relay anycast"
    case benchmarking = "benchmarking"
    case multicast = "multicast"
    case reserved = "reserved"
    case nat64 = "NAT64"
    case teredo = "Teredo"
    case sixToFour = "6to4"
    case outsideGlobalUnicast = "IPv6 outside global unicast"
}

extension BlockedRange: CustomStringConvertible {
    public var description: String { rawValue }
}
