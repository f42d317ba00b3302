import Foundation

/// The folder fsyncs that make renames durable, shared. A caller waits for a sync of its
/// folder that began after its rename; renames that land while a sync runs share the next
/// one. A thousand small downloads ending within a second took a thousand folder syncs, each a
/// flush of the device.
final class DirectorySyncs: Sendable {
    /// Each folder's failure (nil: synced), so one tenant's failing folder fails only its own.
    private let syncs: CoalescingQueue<String, FileFailure?>

    init(blocking: BlockingPool) {
        syncs = CoalescingQueue { directories in
            let failures = try await blocking.run {
                var failures: [String: FileFailure] = [:]
                for directory in Set(directories) {
                    do throws(FileFailure) { try FileOperations.syncDirectory(directory) } catch { failures[directory] = error }
                }
                return failures
            }
            return directories.map { failures[$0] }
        }
    }

    /// Returns once the folder holding `path` was synced after this call began.
    func syncFolder(of path: String) async throws {
        if let failure = try await syncs((path as NSString).deletingLastPathComponent) { throw failure }
    }
}
