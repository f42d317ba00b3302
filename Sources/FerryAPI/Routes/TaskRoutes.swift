import FerryCore
import FerryStore
import Foundation
import Hummingbird

/// Creating tasks, reading them (with long-polling), and the commands of URLSessionTask.
struct TaskRoutes {
    let services: APIServices

    /// The longest `?wait=` a client may ask for; a client waits longer by asking again.
    static let maximumWait = 120.0

    func register(on router: RouterGroup<TenantContext>) {
        router.post("sessions/:sessionID/tasks") { request, context in
            let sessionID = try context.parameters.require("sessionID")
            let idempotencyKey = try Self.idempotencyKey(of: request)
            let (bytes, body) = try await JSONBody.read(request, limit: JSONBody.taskLimit)
            var creation = try TaskCreation(validating: body, urlChecker: services.urlChecker)
            let secret = try DelegateSecret.prepare(&creation.delegate)
            let quotas = QuotaGuard(tenants: services.database.tenants)
            if creation.kind == .download { try await quotas.checkStorage(for: context.tenant) }
            if case .inline(let bytes) = creation.uploadBody { try quotas.checkTaskSize(Int64(bytes.count), for: context.tenant, field: "body") }
            if let bytes = creation.requestBody { try quotas.checkTaskSize(Int64(bytes.count), for: context.tenant, field: "request.httpBody") }
            var origin = TaskStore.Origin(idempotencyKey: idempotencyKey, fingerprint: idempotencyKey.map { _ in RequestFingerprint.of(bytes) })
            let transferRequest: TransferRequest
            if let token = creation.resumeData {
                let resume = try services.resumeData.decode(token, tenantID: context.tenantID)
                transferRequest = resume.originalRequest.transferRequest
                origin.checkpoint = TransferCheckpoint(
                    partialFile: resume.partialFile, bytesOnDisk: resume.bytesOnDisk, validator: resume.validator,
                    url: resume.url, expectedTotalBytes: resume.expectedTotalBytes
                )
                origin.adoptsPartialFileOf = resume.taskID
            } else if let request = creation.request {
                transferRequest = request
            } else {
                throw APIError.badRequest("request: is required.", field: "request")
            }
            let host = try services.urlChecker.check(origin.checkpoint?.url ?? transferRequest.url, field: "request.url").host
            let (task, created) = try await services.database.tasks.create(
                tenantID: context.tenantID, sessionID: sessionID, creation, request: transferRequest, host: host, origin: origin
            )
            // The delegate's secret is shown once: not when an Idempotency-Key replays the creation.
            let delegate = created && secret != nil ? try await services.database.webhooks.delegate(tenantID: context.tenantID, taskID: task.id)?.endpoint : nil
            let answer = try DelegateSecret.answer(TaskView(task), delegate: delegate, secret: secret)
            return try JSONResponse.make(answer, status: created ? .created : .ok, headers: [.location: "/v1/tasks/\(task.id)"])
        }

        router.get("tasks/:taskID") { request, context in
            let id = try context.parameters.require("taskID")
            let query = QueryParameters(request)
            let wait = try query.number("wait", in: 0...Self.maximumWait)
            try query.finish()
            var task = try await services.database.tasks.find(tenantID: context.tenantID, id: id)
            if let wait {
                task = try await waitForCompletion(task, seconds: wait, tenantID: context.tenantID)
            }
            return try JSONResponse.make(TaskView(task))
        }

        // URLSessionTask's settable properties: `priority` and `taskDescription`.
        router.patch("tasks/:taskID") { request, context in
            let id = try context.parameters.require("taskID")
            let (_, body) = try await JSONBody.read(request, limit: JSONBody.smallLimit)
            let update = try TaskUpdate(validating: body)
            return try JSONResponse.make(TaskView(try await services.database.tasks.update(tenantID: context.tenantID, taskID: id, update)))
        }

        let commands: [(String, TaskLifecycle.Command)] = [("resume", .resume), ("suspend", .suspend), ("cancel", .cancel)]
        for (name, command) in commands {
            router.post("tasks/:taskID/\(name)") { request, context in
                let id = try context.parameters.require("taskID")
                try await Self.expectEmptyBody(request)
                let result = try await services.database.tasks.apply(command, tenantID: context.tenantID, taskID: id, resumeData: services.resumeData)
                return try JSONResponse.make(TaskView(result.task))
            }
        }

        router.post("tasks/:taskID/cancelByProducingResumeData") { request, context in
            let id = try context.parameters.require("taskID")
            try await Self.expectEmptyBody(request)
            let current = try await services.database.tasks.find(tenantID: context.tenantID, id: id)
            guard current.kind == .download else {
                throw APIError.conflict("cancelByProducingResumeData applies to download tasks; this is a \(current.kind.rawValue) task.")
            }
            var task = try await services.database.tasks.apply(
                .cancelProducingResumeData, tenantID: context.tenantID, taskID: id, resumeData: services.resumeData
            ).task
            if task.state != .completed {
                // The owner is stopping the transfer and syncing its file; it completes the task shortly.
                task = try await waitForCompletion(task, seconds: 20, tenantID: context.tenantID)
                guard task.state == .completed else {
                    throw APIError.unavailable("The transfer is still stopping; call cancelByProducingResumeData again.")
                }
            }
            return try JSONResponse.make(ResumeDataView(resumeData: task.error?.resumeData))
        }

        router.get("tasks/:taskID/metrics") { _, context in
            let id = try context.parameters.require("taskID")
            guard let metrics = try await services.database.tasks.metrics(tenantID: context.tenantID, taskID: id) else {
                throw APIError.conflict("The task has no metrics until its transfer ends.")
            }
            return try JSONResponse.make(metrics)
        }
    }

    /// Re-reads the task until it completes or `seconds` pass. Completion notifications wake it
    /// early; the database stays the truth, read again after every wake.
    private func waitForCompletion(_ task: TaskRecord, seconds: Double, tenantID: String) async throws -> TaskRecord {
        var task = task
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while task.state != .completed {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { break }
            let (tasks, taskID) = (services.database.tasks, task.id)
            await services.hub.waitForCompletion(of: taskID, timeout: min(remaining, .seconds(5))) {
                (try? await tasks.find(tenantID: tenantID, id: taskID).state) == .completed
            }
            try Task.checkCancellation()
            task = try await services.database.tasks.find(tenantID: tenantID, id: task.id)
        }
        return task
    }

    /// `Idempotency-Key`: up to 255 visible ASCII characters.
    static func idempotencyKey(of request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError.badRequest("The Idempotency-Key header must be 1 to 255 visible ASCII characters.", field: "Idempotency-Key")
        }
        return key
    }

    /// Commands take no parameters: an empty body or `{}`.
    static func expectEmptyBody(_ request: Request) async throws {
        guard let body = try await JSONBody.readOptional(request) else { return }
        try FieldReader(body).finish()
    }
}

/// `{resumeData}` of `cancelByProducingResumeData`: null when the server cannot resume.
struct ResumeDataView: Encodable {
    var resumeData: String?

    enum CodingKeys: String, CodingKey { case resumeData }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(resumeData, forKey: .resumeData)
    }
}
