import FerryStore
import Foundation
import Logging

/// Brings the data folder back in line with the database after a crash:
/// - a partial file no task needs is removed;
/// - a finished file that was renamed into place but never committed (the process died between
///   the rename and the commit) goes back to being the task's partial file, so the transfer
///   continues from it — a `Range` from its full length is answered 416 and the task completes
///   without fetching it again;
/// - a file in the downloads folder that nobody owns is removed;
/// - resume data older than its retention releases its partial file;
/// - a streamed upload body of a task that has ended (cancelled while nobody ran it, reaped,
///   or gone) is removed: only a transfer's own end removed them;
/// - a file of the blobs folder without a blob's row (a `.uploading` file of an upload cut by a
///   crash, or a blob renamed into place whose row never committed) is removed: counted in no
///   quota, it stayed for good;
/// - a file of the cache folder that is no cache entry's body (written, then the process died
///   before the entry's row was; or a temporary file of a write cut short) is removed: counted
///   in no session's cache size, it stayed for good.
///
/// Files younger than `gracePeriod` are left alone: they may belong to a transfer that is being
/// set up, by this or another instance sharing the folder, whose row is not yet visible.
struct StorageReconciler: Sendable {
    let files: TenantFiles
    let storage: StorageReferences
    let blocking: BlockingPool
    let logger: Logger
    var gracePeriod: TimeInterval = 120
    var resumeDataRetention: Duration = .seconds(7 * 24 * 3600)

    struct Report: Sendable, Equatable {
        var removedPartials = 0
        var restoredDownloads = 0
        var removedDownloads = 0
        var removedStreams = 0
        var removedBlobs = 0
        var removedCacheBodies = 0
    }

    func reconcile() async throws -> Report {
        var report = Report()
        for (tenantID, partialFile) in try await storage.expireResumeData(olderThan: resumeDataRetention) {
            if let path = try? files.path(.partial, tenantID: tenantID, name: partialFile) {
                try await blocking.run { FileOperations.remove(path) }
            }
        }
        for tenantID in try await blocking.run({ [files] in Self.entries(of: files.root) }) {
            try await reconcilePartials(tenantID: tenantID, report: &report)
            try await reconcileDownloads(tenantID: tenantID, report: &report)
            try await reconcileStreams(tenantID: tenantID, report: &report)
            try await reconcileBlobs(tenantID: tenantID, report: &report)
            report.removedCacheBodies += try await removeUnreferenced(in: .cache, tenantID: tenantID) { names in
                try await storage.cachedBodies(tenantID: tenantID, names: names)
            }
        }
        if report != Report() {
            logger.notice("reconciled the data folder with the database", metadata: [
                "removedPartials": "\(report.removedPartials)", "restoredDownloads": "\(report.restoredDownloads)",
                "removedDownloads": "\(report.removedDownloads)", "removedStreams": "\(report.removedStreams)",
                "removedBlobs": "\(report.removedBlobs)", "removedCacheBodies": "\(report.removedCacheBodies)",
            ])
        }
        return report
    }

    private func reconcilePartials(tenantID: String, report: inout Report) async throws {
        report.removedPartials += try await removeUnreferenced(in: .partial, tenantID: tenantID) { names in
            try await storage.referencedPartials(tenantID: tenantID, names: names)
        }
    }

    private func reconcileBlobs(tenantID: String, report: inout Report) async throws {
        report.removedBlobs += try await removeUnreferenced(in: .blobs, tenantID: tenantID) { names in
            try await storage.existingBlobs(tenantID: tenantID, names: names)
        }
    }

    /// Removes the settled files of `area` that `referenced` (asked with their names) does not
    /// name; answers how many.
    private func removeUnreferenced(
        in area: TenantFiles.Area, tenantID: String, referenced: ([String]) async throws -> Set<String>
    ) async throws -> Int {
        let directory = try files.directory(area, tenantID: tenantID)
        let names = try await settledFiles(in: directory)
        let kept = try await referenced(names)
        let removed = names.filter { !kept.contains($0) }
        for name in removed {
            let path = "\(directory)/\(name)"
            try await blocking.run { FileOperations.remove(path) }
        }
        return removed.count
    }

    private func reconcileDownloads(tenantID: String, report: inout Report) async throws {
        let directory = try files.directory(.downloads, tenantID: tenantID)
        let names = try await settledFiles(in: directory)
        for (name, fate) in try await storage.fates(ofDownloads: names, tenantID: tenantID) {
            let path = "\(directory)/\(name)"
            switch fate {
            case .keep:
                continue
            case .restore(let partialName):
                let partialPath = try files.path(.partial, tenantID: tenantID, name: partialName)
                let restored = try await blocking.run {
                    guard FileOperations.size(of: partialPath) == nil else {
                        FileOperations.remove(path)
                        return false
                    }
                    return rename(path, partialPath) == 0
                }
                if restored { report.restoredDownloads += 1 } else { report.removedDownloads += 1 }
            case .remove:
                try await blocking.run { FileOperations.remove(path) }
                report.removedDownloads += 1
            }
        }
    }

    private func reconcileStreams(tenantID: String, report: inout Report) async throws {
        let directory = try files.directory(.streams, tenantID: tenantID)
        let names = try await settledFiles(in: directory)
        // "<task id>.<generation>.body", ".done" or ".abandoned".
        let taskOf = Dictionary(uniqueKeysWithValues: names.map { ($0, String($0.prefix { $0 != "." })) })
        let unfinished = try await storage.unfinishedTasks(tenantID: tenantID, ids: Array(Set(taskOf.values)))
        for name in names where !unfinished.contains(taskOf[name] ?? "") {
            let path = "\(directory)/\(name)"
            try await blocking.run { FileOperations.remove(path) }
            report.removedStreams += 1
        }
    }

    /// Names of the regular files in `directory` last modified before the grace period.
    private func settledFiles(in directory: String) async throws -> [String] {
        let cutoff = Date().addingTimeInterval(-gracePeriod)
        return try await blocking.run {
            Self.entries(of: directory).filter { name in
                let attributes = try? FileManager.default.attributesOfItem(atPath: "\(directory)/\(name)")
                guard attributes?[.type] as? FileAttributeType == .typeRegular,
                      let modified = attributes?[.modificationDate] as? Date
                else { return false }
                return modified < cutoff
            }
        }
    }

    private static func entries(of directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }
}
