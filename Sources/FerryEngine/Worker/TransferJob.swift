import FerryCore
import FerryStore
import Foundation

/// A claimed task as a worker runs it: the claim plus where its files are and the rules it obeys.
struct TransferJob: Sendable {
    var claim: ClaimedTask
    /// Downloads: the partial file's name and path.
    var partialName: String?
    var partialPath: String?
    /// Uploads from a blob: its path.
    var uploadFilePath: String?
    var addressPolicy: AddressPolicy
    /// The most a data or upload task keeps of a response body.
    var maximumDataBytes: Int
    var userAgent: String

    var lease: LeaseToken { LeaseToken(taskID: claim.taskID, epoch: claim.leaseEpoch) }
    var taskID: String { claim.taskID }
    var attempt: Int { claim.previousAttempts + 1 }

    /// `timeoutInterval` of the request, else the session's `timeoutIntervalForRequest`.
    var requestTimeout: Double {
        claim.originalRequest.timeoutInterval ?? claim.configuration.timeoutIntervalForRequest
    }
}

/// Per-host admission: the key under which `httpMaximumConnectionsPerHost` is counted.
struct HostKey: Hashable, Sendable {
    var sessionID: String
    var host: String
}
