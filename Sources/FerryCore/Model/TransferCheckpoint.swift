/// What of a download is safely on disk, and how to continue it: written by the owner at a
/// bounded interval while the transfer runs, and the source of every resume (after a crash,
/// a takeover, a suspend, or a new task made from resume data).
public struct TransferCheckpoint: Codable, Sendable, Equatable {
    /// The partial file's name inside the tenant's partial-files folder (chosen by Ferry).
    public var partialFile: String
    /// Bytes of the body in the partial file that were fsynced before this checkpoint was written.
    public var bytesOnDisk: Int64
    /// The validator the bytes on disk were fetched under; without one the bytes cannot be resumed.
    public var validator: ResumeValidator?
    /// The URL the bytes came from (after redirects).
    public var url: String
    public var expectedTotalBytes: Int64?

    public init(partialFile: String, bytesOnDisk: Int64, validator: ResumeValidator?, url: String, expectedTotalBytes: Int64?) {
        self.partialFile = partialFile
        self.bytesOnDisk = bytesOnDisk
        self.validator = validator
        self.url = url
        self.expectedTotalBytes = expectedTotalBytes
    }

    /// Whether a transfer can continue from here with `Range` + `If-Range`.
    public var isResumable: Bool { validator != nil && bytesOnDisk > 0 }
}
