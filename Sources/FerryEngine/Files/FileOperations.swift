import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Blocking file steps of finishing a download, in the order SAFETY.md asks for:
/// fsync the file, check its size, rename it into place, then fsync the folder
/// (`DirectorySyncs`, which lets renames that land together share that last step).
enum FileOperations {
    /// The steps up to the rename; the caller syncs the folder before it reports the file.
    static func settle(_ file: PartialFile, to destination: String, expectedSize: Int64?) throws(FileFailure) -> Int64 {
        let size = try file.sync()
        if let expectedSize, expectedSize >= 0, size != expectedSize {
            throw FileFailure(operation: "size check (\(size) of \(expectedSize) bytes)", path: file.path, errno: EIO)
        }
        guard rename(file.path, destination) == 0 else {
            throw FileFailure(operation: "rename", path: file.path, errno: errno)
        }
        return size
    }

    static func syncDirectory(_ directory: String) throws(FileFailure) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileFailure(operation: "open", path: directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FileFailure(operation: "fsync", path: directory, errno: errno) }
    }

    static func remove(_ path: String) {
        unlink(path)
    }

    static func size(of path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }
}
