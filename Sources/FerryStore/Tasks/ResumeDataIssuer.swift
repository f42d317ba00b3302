import FerryCore
import Foundation

/// Turns checkpoints into signed resume data and back, with the installation's signing key.
public struct ResumeDataIssuer: Sendable {
    let signingKey: [UInt8]

    public init(signingKey: [UInt8]) {
        self.signingKey = signingKey
    }

    /// Resume data for a download's checkpoint, or nil when it cannot be resumed
    /// (no strong validator, nothing on disk, or not a GET).
    public func token(tenantID: String, taskID: String, originalRequest: TransferRequest, checkpoint: TransferCheckpoint?) -> String? {
        guard let checkpoint, let validator = checkpoint.validator, checkpoint.bytesOnDisk > 0,
              originalRequest.httpMethod.uppercased() == "GET"
        else { return nil }
        let token = ResumeDataToken(
            tenantID: tenantID,
            taskID: taskID,
            url: checkpoint.url,
            validator: validator,
            bytesOnDisk: checkpoint.bytesOnDisk,
            expectedTotalBytes: checkpoint.expectedTotalBytes,
            partialFile: checkpoint.partialFile,
            originalRequest: .init(originalRequest),
            createdAt: Date()
        )
        return token.encode(signingKey: signingKey)
    }

    public func decode(_ text: String, tenantID: String) throws(ResumeDataError) -> ResumeDataToken {
        try ResumeDataToken.decode(text, signingKey: signingKey, expectedTenantID: tenantID)
    }
}
