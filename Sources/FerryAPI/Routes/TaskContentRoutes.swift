import FerryCore
import FerryStore
import Foundation
import Hummingbird
import NIOPosix

/// A task's content: a data task's body, a download's file.
struct TaskContentRoutes {
    let services: APIServices
    let fileIO = FileIO()

    func register(on router: RouterGroup<TenantContext>) {
        router.get("tasks/:taskID/data") { _, context in
            let id = try context.parameters.require("taskID")
            let (task, body, isRemoved) = try await services.database.tasks.responseBody(tenantID: context.tenantID, taskID: id)
            guard task.kind != .download else {
                throw APIError.conflict("A download task's body is its file: GET /v1/tasks/\(id)/file.")
            }
            guard task.state == .completed else { throw APIError.conflict("The task has not completed yet (state \(task.state.rawValue)).") }
            if let error = task.error { throw APIError.conflict("The task completed with an error and has no data: \(error.localizedDescription)") }
            if isRemoved { throw APIError.gone("The task's data was removed by its session's reset.") }
            var headers: HTTPFields = [:]
            headers[.contentType] = Self.contentType(of: task.response)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body ?? [])))
        }

        router.get("tasks/:taskID/file") { request, context in
            let id = try context.parameters.require("taskID")
            let task = try await services.database.tasks.find(tenantID: context.tenantID, id: id)
            guard task.kind == .download else { throw APIError.conflict("Only download tasks have a file; read /v1/tasks/\(id)/data.") }
            guard task.hasDownloadedFile else {
                if try await services.database.tasks.storageWasRemoved(tenantID: context.tenantID, taskID: id) {
                    throw APIError.gone("The task's file was removed by its session's reset.")
                }
                throw APIError.notFound(task.state == .completed ? "file (it was deleted, or the download failed)" : "file yet: the download has not completed")
            }
            let path = try services.files.path(.downloads, tenantID: context.tenantID, name: TenantFiles.downloadName(taskID: id))
            return try await serveFile(path: path, task: task, request: request, context: context)
        }

        router.delete("tasks/:taskID/file") { _, context in
            let id = try context.parameters.require("taskID")
            guard let name = try await services.database.tasks.forgetDownloadedFile(tenantID: context.tenantID, taskID: id) else {
                throw APIError.notFound("file")
            }
            let path = try services.files.path(.downloads, tenantID: context.tenantID, name: name)
            try await NIOThreadPool.singleton.runIfActive { _ = unlink(path) }
            return Response(status: .noContent)
        }
    }

    private func serveFile(path: String, task: TaskRecord, request: Request, context: TenantContext) async throws -> Response {
        guard let size = try await NIOThreadPool.singleton.runIfActive({ Self.fileSize(path) }) else {
            throw APIError.notFound("file")
        }
        var headers: HTTPFields = [:]
        headers[.contentType] = Self.contentType(of: task.response)
        headers[.acceptRanges] = "bytes"
        let filename = task.response?.suggestedFilename ?? task.id
        headers[.contentDisposition] = "attachment; filename=\"\(filename.replacingOccurrences(of: "\"", with: ""))\""

        switch ByteRangeRequest.parse(request.headers[.range], size: size) {
        case .whole:
            headers[.contentLength] = String(size)
            let body = size == 0 ? ResponseBody() : try await fileIO.loadFile(path: path, context: context)
            return Response(status: .ok, headers: headers, body: body)
        case .partial(let range):
            headers[.contentLength] = String(range.count)
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            let body = try await fileIO.loadFile(path: path, range: Int(range.lowerBound)...Int(range.upperBound), context: context)
            return Response(status: .partialContent, headers: headers, body: body)
        case .unsatisfiable:
            var problem = APIError(
                status: .rangeNotSatisfiable, slug: "range-not-satisfiable", title: "The range is not satisfiable.",
                detail: "The file has \(size) bytes.", field: "Range"
            )
            problem.headers[.contentRange] = "bytes */\(size)"
            throw problem
        }
    }

    private static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    static func contentType(of response: HTTPResponseSnapshot?) -> String {
        guard let mimeType = response?.mimeType, !mimeType.isEmpty else { return "application/octet-stream" }
        if let charset = response?.textEncodingName { return "\(mimeType); charset=\(charset)" }
        return mimeType
    }
}

/// A `Range: bytes=…` request header for one range (multiple ranges are served whole).
enum ByteRangeRequest: Equatable {
    case whole
    case partial(ClosedRange<Int64>)
    case unsatisfiable

    static func parse(_ header: String?, size: Int64) -> ByteRangeRequest {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { return .whole }
        if parts[0].isEmpty {
            guard let suffix = Int64(parts[1]) else { return .whole }
            // RFC 9110 §14.1.2: a suffix range is satisfiable only with a non-zero length.
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .partial(max(0, size - suffix)...(size - 1))
        }
        guard let start = Int64(parts[0]), start >= 0 else { return .whole }
        guard start < size else { return .unsatisfiable }
        let end = parts[1].isEmpty ? size - 1 : min(Int64(parts[1]) ?? -1, size - 1)
        guard end >= start else { return parts[1].isEmpty ? .unsatisfiable : .whole }
        return .partial(start...end)
    }
}
