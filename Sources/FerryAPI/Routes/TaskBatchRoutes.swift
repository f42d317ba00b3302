import FerryCore
import FerryStore
import Foundation
import Hummingbird

/// `POST /v1/sessions/{id}/tasks/batch`: many data or download tasks in one request and one
/// transaction, as a list of URLs is handed to a download tool. Ferry's own extension of
/// URLSession's API: a program with a thousand files to fetch should not need a thousand
/// round trips to say so.
struct TaskBatchRoutes {
    let services: APIServices

    private struct BatchView: Encodable {
        var data: [TaskView]
    }

    func register(on router: RouterGroup<TenantContext>) {
        router.post("sessions/:sessionID/tasks/batch") { request, context in
            let sessionID = try context.parameters.require("sessionID")
            let idempotencyKey = try TaskRoutes.idempotencyKey(of: request)
            let (bytes, body) = try await JSONBody.read(request, limit: JSONBody.batchLimit)
            let items = try readItems(body)
            let quotas = QuotaGuard(tenants: services.database.tenants)
            for (index, item) in items.enumerated() {
                guard let bytes = item.creation.requestBody else { continue }
                try quotas.checkTaskSize(Int64(bytes.count), for: context.tenant, field: "tasks[\(index)].request.httpBody")
            }
            if items.contains(where: { $0.creation.kind == .download }) {
                try await quotas.checkStorage(for: context.tenant)
            }
            let (tasks, created) = try await services.database.tasks.createBatch(
                tenantID: context.tenantID, sessionID: sessionID, items,
                idempotencyKey: idempotencyKey, fingerprint: idempotencyKey.map { _ in RequestFingerprint.of(bytes) }
            )
            return try JSONResponse.make(BatchView(data: tasks.map(TaskView.init)), status: created ? .created : .ok)
        }
    }

    /// `{"tasks": [...]}`: each a task creation, without what only a single creation carries.
    private func readItems(_ body: JSONValue) throws -> [TaskStore.BatchItem] {
        let reader = try FieldReader(body)
        guard let elements = try reader.array("tasks", maxCount: TaskStore.maximumBatchSize), !elements.isEmpty else {
            throw APIError.badRequest("tasks: is required: an array of 1 to \(TaskStore.maximumBatchSize) task creations.", field: "tasks")
        }
        try reader.finish()
        return try elements.enumerated().map { index, element in
            let path = "tasks[\(index)]"
            let creation = try TaskCreation(validating: element, path: path, urlChecker: services.urlChecker)
            for (field, isPresent) in [("resumeData", creation.resumeData != nil), ("delegate", creation.delegate != nil), ("body", creation.uploadBody != nil)]
            where isPresent {
                throw APIError.badRequest(
                    "\(path).\(field): is not accepted in a batch; create this task with POST /v1/sessions/{id}/tasks.", field: "\(path).\(field)"
                )
            }
            guard let request = creation.request else {
                throw APIError.badRequest("\(path).request: is required.", field: "\(path).request")
            }
            let host = try services.urlChecker.check(request.url, field: "\(path).request.url").host
            return TaskStore.BatchItem(creation: creation, request: request, host: host)
        }
    }
}
