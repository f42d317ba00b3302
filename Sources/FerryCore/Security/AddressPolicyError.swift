/// Why an operator's network list (`FERRY_ALLOW_NETWORKS`) could not be read.
public enum AddressPolicyError: Error, Equatable, Sendable {
    /// `entry` is not a network; `reason` says what is wrong with it.
    case invalidNetwork(String, reason: String)
}

extension AddressPolicyError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .invalidNetwork(let entry, let reason):
            return "invalid network \"\(entry)\" in FERRY_ALLOW_NETWORKS: \(reason)"
        }
    }
}
