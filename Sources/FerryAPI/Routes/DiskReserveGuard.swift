import FerryStore
import Hummingbird
import Synchronization

/// Bodies the API writes to the data folder (blobs, streamed upload bodies) stop at the disk's
/// reserve (`FERRY_DISK_RESERVE_BYTES`), as downloads do: one tenant's upload must not fill the
/// disk every tenant's transfers write to. Checked before the first byte (with the declared
/// length, when there is one) and then every `interval` bytes: asking the file system is a
/// system call, and a body arrives in chunks of a few KiB. Used on the blocking thread pool,
/// where the body is written.
final class DiskReserveGuard: Sendable {
    let disk: DiskSpace?
    /// Bytes written since the last check.
    private let sinceChecked = Atomic<Int64>(0)

    static let interval: Int64 = 4 * 1024 * 1024

    init(_ disk: DiskSpace?) {
        self.disk = disk
    }

    /// Throws 507 when `bytes` more would go into the reserve. (A declared length is the
    /// client's word: a negative one counts as none.)
    func check(writing bytes: Int64) throws {
        guard let disk, !disk.allows(writing: max(0, bytes)) else { return }
        throw APIError.insufficientStorage(
            "The server's disk is at its reserve (\(disk.reserveBytes) bytes kept free for transfers); nothing more can be stored until space is freed."
        )
    }

    /// Before writing `bytes` more of a body: checks again once `interval` bytes have been
    /// written since the last check.
    func admit(_ bytes: Int) throws {
        let written = sinceChecked.add(Int64(bytes), ordering: .relaxed).newValue
        guard written >= Self.interval else { return }
        sinceChecked.store(0, ordering: .relaxed)
        try check(writing: written)
    }
}

extension Request {
    /// The body length the client declares (`Content-Length`), when it declares one.
    var declaredBodyLength: Int64? { headers[.contentLength].flatMap(Int64.init) }
}
