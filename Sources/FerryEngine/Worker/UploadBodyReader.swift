import Curl
import FerryCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The request body curl reads from: bytes held in memory, or a file read piece by piece.
/// Seekable, because curl sends a body again after an authentication round or a 307/308.
final class UploadBodyReader {
    private enum Source {
        case bytes([UInt8])
        case file(descriptor: Int32)
        /// Streamed by the client; a new spool for every body stream the task asks for.
        case stream(directory: String, taskID: String)
    }

    private let source: Source
    /// -1 when unknown (sent chunked).
    let length: Int64
    private(set) var offset: Int64 = 0

    /// The current spool of a streamed body.
    private(set) var spool: BodyStreamSpool?

    /// The body for a claimed task, or nil when it sends none.
    init?(job: TransferJob) throws {
        if job.claim.uploadSource == .stream, let directory = job.streamDirectory {
            source = .stream(directory: directory, taskID: job.taskID)
            length = transferSizeUnknown
        } else if let path = job.uploadFilePath {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw FileFailure(operation: "open", path: path, errno: errno) }
            var info = stat()
            fstat(fd, &info)
            source = .file(descriptor: fd)
            length = Int64(info.st_size)
        } else if let bytes = job.claim.requestBody {
            source = .bytes(bytes)
            length = Int64(bytes.count)
        } else {
            return nil
        }
    }

    deinit {
        if case .file(let fd) = source { close(fd) }
    }

    var isStreamed: Bool {
        if case .stream = source { return true }
        return false
    }

    /// Starts reading the next body stream the task asks the client for.
    func beginStream(generation: Int) {
        guard case .stream(let directory, let taskID) = source else { return }
        spool = BodyStreamSpool(directory: directory, taskID: taskID, generation: generation)
        offset = 0
    }

    /// Reads a streamed body: bytes, end, nothing yet (`.pause`), or failure.
    func readStream(into buffer: UnsafeMutableRawBufferPointer) -> CurlReadResult {
        guard let spool else { return .abort }
        switch spool.read(into: buffer) {
        case .bytes(let count):
            offset += Int64(count)
            return .bytes(count)
        case .end: return .bytes(0)
        case .wouldBlock: return .pause
        case .abandoned: return .abort
        }
    }

    /// Fills `buffer`; 0 at the end. Returns nil when the file cannot be read.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        switch source {
        case .stream:
            return nil
        case .bytes(let bytes):
            let start = Int(offset)
            let count = min(buffer.count, bytes.count - start)
            guard count > 0 else { return 0 }
            bytes.withUnsafeBytes { all in
                buffer.baseAddress?.copyMemory(from: all.baseAddress! + start, byteCount: count)
            }
            offset += Int64(count)
            return count
        case .file(let fd):
            while true {
                let count = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else { return nil }
                offset += Int64(count)
                return count
            }
        }
    }

    func seek(to position: Int64) -> Bool {
        // A stream cannot be rewound (URLSession asks for a new one instead); the start is fine.
        if isStreamed { return position == offset }
        guard position >= 0, length < 0 || position <= length else { return false }
        offset = position
        return true
    }
}
