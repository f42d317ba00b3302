extension TransferError {
    /// The start of `reason` when Ferry's address policy refused a connection
    /// (see `AddressVerdict.refusalReason(for:)`).
    public static let policyRefusalPrefix = "refused by policy"

    /// Whether Ferry's address policy, not the network, refused the connection.
    public var isPolicyRefusal: Bool {
        reason?.hasPrefix(Self.policyRefusalPrefix) == true
    }
}
