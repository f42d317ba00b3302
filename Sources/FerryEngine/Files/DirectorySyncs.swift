import Foundation

/// The folder fsyncs that make renames durable, shared. A caller waits for a sync of its
/// folder that began after its rename; renames that land while a sync runs share the next
/// one. A thousand small downloads ending within a second took a thousand folder syncs, each a
/// flush of the device, where a few dozen do.
final class DirectorySyncs: Sendable {
    private let syncs: CoalescingQueue<String, Void>

    init(blocking: BlockingPool) {
        syncs = CoalescingQueue { directories in
            // A failure fails every caller of the batch: each then reports its file unsettled.
            try await blocking.run { for directory in Set(directories) { try FileOperations.syncDirectory(directory) } }
            return directories.map { _ in () }
        }
    }

    /// Returns once the folder holding `path` was synced after this call began.
    func syncFolder(of path: String) async throws {
        try await syncs((path as NSString).deletingLastPathComponent)
    }
}
