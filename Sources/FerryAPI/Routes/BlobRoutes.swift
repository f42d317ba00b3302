import FerryCore
import FerryStore
import Foundation
import Hummingbird
import NIOCore
import NIOPosix

/// `PUT /v1/blobs`: a body of any size streamed to the tenant's storage (never held whole in
/// memory), for upload tasks created with `body: {"blob": "blb_…"}`.
struct BlobRoutes {
    let services: APIServices

    /// The largest blob accepted (`FERRY_MAX_BLOB_BYTES` is not configurable yet; tenants'
    /// `maxTaskBytes` quota applies below it).
    static let maximumBlobBytes: Int64 = 64 * 1024 * 1024 * 1024

    func register(on router: RouterGroup<TenantContext>) {
        router.put("blobs") { request, context in
            let tenantID = context.tenantID
            let limit = try QuotaGuard.uploadLimit(for: context.tenant, declaredLength: request.declaredBodyLength, of: "A blob")
            try await QuotaGuard(tenants: services.database.tenants).checkStorage(for: context.tenant)
            let (disk, declared) = (DiskReserveGuard(services.diskSpace), request.declaredBodyLength ?? 0)
            try await NIOThreadPool.singleton.runIfActive { [files = services.files] in
                try disk.check(writing: declared)
                try files.createDirectories(tenantID: tenantID)
            }
            let id = IDs.make("blb")
            let path = try services.files.path(.blobs, tenantID: tenantID, name: id)
            let written = try await BlobWriter.write(request.body, to: path, limit: limit, disk: disk)
            do {
                let blob = try await services.database.blobs.create(id: id, tenantID: tenantID, size: written.size, sha256: written.sha256)
                return try JSONResponse.make(BlobView(blob), status: .created, headers: [.location: "/v1/blobs/\(id)"])
            } catch {
                try? await NIOThreadPool.singleton.runIfActive { _ = unlink(path) }
                throw error
            }
        }

        router.get("blobs") { request, context in
            let (limit, after) = try QueryParameters.page(of: request)
            return try JSONResponse.make(ListView(try await services.database.blobs.list(tenantID: context.tenantID, limit: limit, after: after), BlobView.init))
        }

        router.get("blobs/:blobID") { _, context in
            let id = try context.parameters.require("blobID")
            return try JSONResponse.make(BlobView(try await services.database.blobs.find(tenantID: context.tenantID, id: id)))
        }

        router.delete("blobs/:blobID") { _, context in
            let id = try context.parameters.require("blobID")
            try await services.database.blobs.delete(tenantID: context.tenantID, id: id)
            let path = try services.files.path(.blobs, tenantID: context.tenantID, name: id)
            try await NIOThreadPool.singleton.runIfActive { _ = unlink(path) }
            return Response(status: .noContent)
        }
    }
}

struct BlobView: Encodable, Sendable {
    var id: String
    var size: Int64
    var sha256: String
    var createdAt: Date

    init(_ blob: BlobRecord) {
        id = blob.id
        size = blob.size
        sha256 = blob.sha256
        createdAt = blob.createdAt
    }
}

/// Streams a request body into a file chunk by chunk — writes on the uploads' thread pool,
/// never an event loop — hashing as it goes; synced and renamed into place when complete.
enum BlobWriter {
    static func write(_ body: RequestBody, to path: String, limit: Int64, disk: DiskReserveGuard) async throws -> (size: Int64, sha256: String) {
        let partial = path + ".uploading"
        let descriptor = try await UploadThreads.run {
            let fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw APIError.unavailable("The blob cannot be stored right now.") }
            return fd
        }
        var digest = StreamingSHA256()
        var size: Int64 = 0
        do {
            for try await chunk in body {
                size += Int64(chunk.readableBytes)
                guard size <= limit else { throw QuotaGuard.uploadTooLarge("A blob", limit: limit) }
                chunk.withUnsafeReadableBytes { digest.update($0) }
                let bytes = chunk
                try await UploadThreads.run {
                    try disk.admit(bytes.readableBytes)
                    try bytes.withUnsafeReadableBytes { try FileWriting.writeAll(descriptor, $0) }
                }
            }
            try await UploadThreads.run {
                // The folder too: the rename must be on disk before the blob's row commits, or a
                // power loss leaves a row whose file is gone.
                guard fsync(descriptor) == 0, rename(partial, path) == 0 else {
                    throw APIError.unavailable("The server's disk cannot store the blob.")
                }
                guard FileWriting.syncFolder(of: path) else {
                    unlink(path)
                    throw APIError.unavailable("The server's disk cannot store the blob.")
                }
            }
        } catch {
            try? await UploadThreads.runEvenIfCancelled {
                close(descriptor)
                unlink(partial)
            }
            throw error
        }
        try await UploadThreads.runEvenIfCancelled { _ = close(descriptor) }
        return (size, digest.finalize())
    }
}
