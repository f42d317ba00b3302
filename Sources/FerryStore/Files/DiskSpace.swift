import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Free space on the file system of the data folder, and the reserve Ferry keeps there
/// (`FERRY_DISK_RESERVE_BYTES`). Downloads stop writing at the reserve, so one large download
/// cannot fill the disk under the database, blobs and every other tenant's transfers.
///
/// `freeBytes()` blocks (statvfs): call it on a worker thread or the blocking pool.
public struct DiskSpace: Sendable {
    public let path: String
    public let reserveBytes: Int64
    /// How free bytes are measured: statvfs, or a simulated disk in tests.
    private let measure: @Sendable (String) -> Int64?

    public init(path: String, reserveBytes: Int64, measure: @escaping @Sendable (String) -> Int64? = { DiskSpace.availableBytes(at: $0) }) {
        self.path = path
        self.reserveBytes = max(0, reserveBytes)
        self.measure = measure
    }

    public static let defaultReserveBytes: Int64 = 512 * 1024 * 1024

    /// Bytes an unprivileged writer can still use; nil when the file system cannot be asked.
    public func freeBytes() -> Int64? {
        measure(path)
    }

    /// Whether `bytes` more can be written without going into the reserve. A file system that
    /// cannot be asked does not stop writes (the write itself reports a full disk).
    public func allows(writing bytes: Int64) -> Bool {
        guard let free = freeBytes() else { return true }
        return free - bytes >= reserveBytes
    }

    public static func availableBytes(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail).multipliedReportingOverflow(by: Int64(info.f_frsize)).partialValue
    }
}
