import FerryCore
import FerryStore
import Foundation
import Hummingbird
import NIOPosix

/// `PUT /v1/tasks/{id}/body`: the body of an upload task created with `{"stream": true}`
/// (uploadTask(withStreamedRequest:)), streamed to the origin as it arrives. The task asks for
/// it with `task.needNewBodyStream`; sending it before the task starts, or right after resuming
/// it, is fine too: it goes to the stream the task asks for next (the answer says which).
struct BodyStreamRoutes {
    let services: APIServices

    func register(on router: RouterGroup<TenantContext>) {
        router.put("tasks/:taskID/body") { request, context in
            let taskID = try context.parameters.require("taskID")
            let tenantID = context.tenantID
            let generation = try await services.database.tasks.bodyStreamGeneration(tenantID: tenantID, taskID: taskID)
            // Refused before the stream's file exists: a retry of the same generation stays possible.
            let limit = try QuotaGuard.uploadLimit(for: context.tenant, declaredLength: request.declaredBodyLength, of: "A streamed body")
            // As for a blob: a tenant at its storage quota stores no more.
            try await QuotaGuard(tenants: services.database.tenants).checkStorage(for: context.tenant)
            let files = services.files
            // Through TenantFiles.path, which checks the names: the task id comes from the URL.
            let body = try files.path(.streams, tenantID: tenantID, name: TenantFiles.streamName(taskID: taskID, generation: generation))
            let done = try files.path(.streams, tenantID: tenantID, name: TenantFiles.streamDoneName(taskID: taskID, generation: generation))
            let abandoned = try files.path(.streams, tenantID: tenantID, name: TenantFiles.streamAbandonedName(taskID: taskID, generation: generation))

            let (disk, declared) = (DiskReserveGuard(services.diskSpace), request.declaredBodyLength ?? 0)
            let descriptor = try await NIOThreadPool.singleton.runIfActive {
                try disk.check(writing: declared)
                try files.createDirectories(tenantID: tenantID)
                let fd = open(body, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard fd >= 0 else {
                    if errno == EEXIST {
                        throw APIError.conflict(
                            "Body stream \(generation) of this task was already sent. Send the next one (generation \(generation + 1)) "
                                + "once the task asks for it with task.needNewBodyStream, or resume the suspended task first."
                        )
                    }
                    throw APIError.unavailable("The body stream cannot be stored right now.")
                }
                return fd
            }
            var size: Int64 = 0
            var failure: (any Error)?
            do {
                for try await chunk in request.body {
                    size += Int64(chunk.readableBytes)
                    guard size <= limit else { throw QuotaGuard.uploadTooLarge("A streamed body", limit: limit) }
                    try await UploadThreads.run {
                        try disk.admit(chunk.readableBytes)
                        try chunk.withUnsafeReadableBytes { try FileWriting.writeAll(descriptor, $0) }
                    }
                }
            } catch {
                failure = error
            }
            let (length, received) = (size, failure)
            // The file is closed in exactly one place; the reader learns the body is complete, and
            // how long it is, from the done marker, or that it will not come from the abandoned one.
            // The answer says the body is stored: the body, then the marker's name, are made durable
            // first, or a crash of the machine could leave a marker longer than the body it vouches
            // for (the task would wait for bytes that never come, and the generation is spent).
            // Even when the client went away: the descriptor is closed and a marker written here only.
            try await UploadThreads.runEvenIfCancelled {
                let synced = received == nil && fsync(descriptor) == 0
                close(descriptor)
                do {
                    if let received { throw received }
                    guard synced else { throw APIError.unavailable("The server's disk cannot store the body.") }
                    try Data("\(length)\n".utf8).write(to: URL(fileURLWithPath: done), options: .atomic)
                    // Past this point the marker is written: a failing folder sync must not add an
                    // abandoned marker beside it.
                    _ = FileWriting.syncFolder(of: done)
                } catch {
                    try? Data().write(to: URL(fileURLWithPath: abandoned))
                    throw error
                }
            }
            return try JSONResponse.make(BodyStreamView(generation: generation, size: size))
        }
    }
}

struct BodyStreamView: Encodable, Sendable {
    var generation: Int
    var size: Int64
}

/// The API's own file writing: all of a buffer to a descriptor, and the folder sync that makes a
/// rename durable (the engine's FileOperations does the same for transfers; FerryAPI does not
/// depend on the engine).
enum FileWriting {
    /// fsyncs the folder `path` is in.
    static func syncFolder(of path: String) -> Bool {
        let descriptor = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
    }

    /// Writes all of `buffer`, retrying short writes and interruptions.
    static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw APIError.unavailable("The server's disk cannot store the body.") }
            offset += written
        }
    }
}
