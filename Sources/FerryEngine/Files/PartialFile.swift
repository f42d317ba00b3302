import FerryCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A download's `.part` file: written by the worker thread as bytes arrive, synced by the
/// checkpointer from another thread, closed when the last reference goes.
///
/// The descriptor stays open as long as any reference exists, so a sync can never hit a
/// closed (or reused) descriptor even if the transfer ends meanwhile.
public final class PartialFile: Sendable {
    public let path: String
    private let descriptor: Int32
    /// Body bytes in the file (written, not necessarily synced).
    private let length: Atomic<Int64>

    /// Opens (creating if needed) the file, keeping its first `keeping` bytes and dropping the rest.
    ///
    /// A file with another name besides this one is not written in place: it starts over as a
    /// new, empty file. A finished download is linked into the URL cache before its completion
    /// commits; when the owner dies in between, the next owner takes the finished file back as
    /// its partial file (`OpenedPartialFile`), and trimming or rewriting that inode would
    /// change the cached body under its entry.
    public init(path: String, keeping: Int64) throws(FileFailure) {
        self.path = path
        var fd = try Self.openAndLock(path)
        var size = stat()
        guard fstat(fd, &size) == 0 else {
            let code = errno
            close(fd)
            throw FileFailure(operation: "stat", path: path, errno: code)
        }
        if size.st_nlink > 1 {
            // Unlinked only while locked: no other owner writes to it meanwhile. (One that opened
            // the name before and locks after finds the name no longer its file: `openAndLock`.)
            guard unlink(path) == 0 || errno == ENOENT else {
                let code = errno
                close(fd)
                throw FileFailure(operation: "unlink", path: path, errno: code)
            }
            close(fd)
            fd = try Self.openAndLock(path)
            size.st_size = 0
        }
        let kept = min(keeping, Int64(size.st_size))
        guard ftruncate(fd, off_t(kept)) == 0 else {
            let code = errno
            close(fd)
            throw FileFailure(operation: "truncate", path: path, errno: code)
        }
        self.descriptor = fd
        self.length = Atomic(kept)
    }

    /// Opens (creating if needed) and locks the file at `path`: the file the name holds once
    /// the lock is held. Another owner may have unlinked the name between this open and this
    /// lock (a file shared with the cache, above); the file opened is then not the partial
    /// file any more, and the name is opened again.
    private static func openAndLock(_ path: String) throws(FileFailure) -> Int32 {
        for _ in 0..<8 {
            let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw FileFailure(operation: "open", path: path, errno: errno) }
            // One writer per partial file, across processes and instances sharing the folder: an
            // owner that lost its lease while stalled may still hold the file, and must not write
            // into what the new owner writes. The lock dies with the descriptor (or the process).
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            guard fcntl(fd, openFileDescriptionSetLock, &lock) == 0 else {
                let code = errno
                close(fd)
                throw FileFailure(operation: "lock", path: path, errno: code)
            }
            var opened = stat()
            var named = stat()
            if fstat(fd, &opened) == 0, stat(path, &named) == 0, opened.st_dev == named.st_dev, opened.st_ino == named.st_ino {
                return fd
            }
            close(fd)
        }
        throw FileFailure(operation: "lock", path: path, errno: EAGAIN)
    }

    deinit {
        close(descriptor)
    }

    /// `F_OFD_SETLK` (Linux 3.15+): Glibc defines it only under _GNU_SOURCE, which Swift's
    /// Glibc module does not set. Unlike classic POSIX locks, an open-file-description lock also
    /// excludes a second open of the same file inside this process.
    private static let openFileDescriptionSetLock: Int32 = 37

    public var bytesWritten: Int64 { length.load(ordering: .acquiring) }

    /// Appends at the end. Only the owning worker thread writes.
    public func append(_ bytes: UnsafeRawBufferPointer) throws(FileFailure) {
        var offset = length.load(ordering: .relaxed)
        var remaining = bytes
        while !remaining.isEmpty {
            let written = pwrite(descriptor, remaining.baseAddress, remaining.count, off_t(offset))
            if written < 0 {
                if errno == EINTR { continue }
                throw FileFailure(operation: "write", path: path, errno: errno)
            }
            offset += Int64(written)
            remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
        }
        length.store(offset, ordering: .releasing)
    }

    /// Drops everything (a 200 answered a resume: the representation starts over).
    public func truncateToZero() throws(FileFailure) {
        try truncate(to: 0)
    }

    /// Drops the bytes after `size`.
    public func truncate(to size: Int64) throws(FileFailure) {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw FileFailure(operation: "truncate", path: path, errno: errno) }
        length.store(size, ordering: .releasing)
    }

    /// Forces the data to disk and returns how many bytes are now durable. Blocking: call it
    /// from a `BlockingPool`, never from a worker or the cooperative pool.
    public func sync() throws(FileFailure) -> Int64 {
        let durable = length.load(ordering: .acquiring)
        guard fdatasync(descriptor) == 0 else { throw FileFailure(operation: "fsync", path: path, errno: errno) }
        return durable
    }
}

/// A failed file operation, with the path for the operator's log (never shown to tenants).
public struct FileFailure: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var path: String
    public var errno: Int32

    public var description: String {
        "\(operation) \(path): \(String(cString: strerror(errno)))"
    }

    /// ENOSPC and EDQUOT: the disk is full, which the tenant should hear about as such.
    public var isOutOfSpace: Bool { errno == ENOSPC || errno == EDQUOT }

    /// Another owner still holds the partial file: try again shortly.
    public var isBusy: Bool { operation == "lock" && (errno == EAGAIN || errno == EACCES) }

    /// How a transfer whose files could not be opened ends: handed back while another owner
    /// still holds its partial file, otherwise failed as URLSession fails a download it cannot
    /// store.
    func transferEnd(failingURL: String) -> TransferEnd {
        if isBusy { return .fileBusy }
        let code: URLErrorCode = operation == "open" ? .cannotCreateFile : .cannotWriteToFile
        return .failed(TransferError(code: code, failingURL: failingURL))
    }
}
