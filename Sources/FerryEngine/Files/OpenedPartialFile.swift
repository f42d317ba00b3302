import FerryCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A download's partial file, opened before its transfer reaches a worker. Opening creates,
/// locks and trims a file, and a create can take milliseconds on a busy disk: done on the
/// worker's thread, it would stall every transfer of that curl loop meanwhile.
struct OpenedPartialFile: Sendable {
    let file: PartialFile
    /// The checkpoint the transfer continues from with `Range` + `If-Range`; nil when it starts
    /// from an empty file.
    let resumingFrom: TransferCheckpoint?

    /// Opens (creating if needed) the partial file at `path`, continuing from `checkpoint` when
    /// the file still holds every byte it says. Blocking: run it on a `BlockingPool`.
    ///
    /// A previous owner that died after renaming the finished file to one of `finishedPaths`
    /// (the first found is taken), but before recording the completion, left the whole file
    /// there: it is put back as the partial file.
    static func open(at path: String, finishedPaths: [String], checkpoint: TransferCheckpoint?) throws(FileFailure) -> OpenedPartialFile {
        var checkpoint = checkpoint
        // A loop, not a lazy compactMap: that calls its closure twice, and this one renames.
        var recovered: Int64?
        for finishedPath in finishedPaths where recovered == nil {
            recovered = recoverFinishedFile(at: finishedPath, to: path)
        }
        if let recovered, checkpoint != nil {
            // The whole file was synced before it was renamed: resume from all of it.
            checkpoint?.bytesOnDisk = recovered
        }
        guard let checkpoint, checkpoint.isResumable else {
            return OpenedPartialFile(file: try PartialFile(path: path, keeping: 0), resumingFrom: nil)
        }
        let file = try PartialFile(path: path, keeping: checkpoint.bytesOnDisk)
        guard file.bytesWritten == checkpoint.bytesOnDisk else {
            // Fewer bytes on disk than the checkpoint says: the file cannot be trusted.
            try file.truncateToZero()
            return OpenedPartialFile(file: file, resumingFrom: nil)
        }
        return OpenedPartialFile(file: file, resumingFrom: checkpoint)
    }

    /// Renames a finished file back to the partial file's name; returns its size when it did.
    private static func recoverFinishedFile(at finishedPath: String, to partialPath: String) -> Int64? {
        guard let size = FileOperations.size(of: finishedPath),
              FileOperations.size(of: partialPath) == nil, rename(finishedPath, partialPath) == 0
        else { return nil }
        return size
    }
}
