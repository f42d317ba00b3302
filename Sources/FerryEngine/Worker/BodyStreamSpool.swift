import FerryStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The spool file a streamed upload's body arrives in (`PUT /v1/tasks/{id}/body`, possibly on
/// another instance sharing the data folder), read by the transfer as it grows.
final class BodyStreamSpool {
    enum ReadResult {
        case bytes(Int)
        /// Nothing more yet; the client is still sending.
        case wouldBlock
        case end
        /// The client stopped sending before the end.
        case abandoned
    }

    let generation: Int
    private let bodyPath: String
    private let donePath: String
    private let abandonedPath: String
    private var descriptor: Int32 = -1
    private(set) var offset: Int64 = 0

    init(directory: String, taskID: String, generation: Int) {
        self.generation = generation
        bodyPath = "\(directory)/\(TenantFiles.streamName(taskID: taskID, generation: generation))"
        donePath = "\(directory)/\(TenantFiles.streamDoneName(taskID: taskID, generation: generation))"
        abandonedPath = "\(directory)/\(TenantFiles.streamAbandonedName(taskID: taskID, generation: generation))"
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether the client has started sending this body.
    var hasStarted: Bool {
        if descriptor >= 0 { return true }
        descriptor = open(bodyPath, O_RDONLY | O_CLOEXEC)
        return descriptor >= 0
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        guard hasStarted else { return .wouldBlock }
        while true {
            let count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if count < 0, errno == EINTR { continue }
            if count > 0 {
                offset += Int64(count)
                return .bytes(count)
            }
            break
        }
        // Nothing to read: finished, given up, or more to come.
        if let length = completedLength, offset >= length { return .end }
        if access(abandonedPath, F_OK) == 0 { return .abandoned }
        return .wouldBlock
    }

    /// Whether reading would now make progress (data, end or abandonment).
    var canProgress: Bool {
        guard hasStarted else { return false }
        var info = stat()
        if fstat(descriptor, &info) == 0, Int64(info.st_size) > offset { return true }
        return completedLength != nil || access(abandonedPath, F_OK) == 0
    }

    private var completedLength: Int64? {
        guard let text = try? String(contentsOfFile: donePath, encoding: .utf8) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
