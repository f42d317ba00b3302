import FerryCore
import FerryStore
import Hummingbird

/// Delegates and their webhooks: endpoints (and why one is disabled), deliveries with their
/// attempts, retrying one, and rotating a delegate's signing secret.
struct WebhookRoutes {
    let services: APIServices

    func register(on router: RouterGroup<TenantContext>) {
        router.get("webhooks/endpoints") { request, context in
            let (limit, after) = try QueryParameters.page(of: request)
            let page = try await services.database.webhooks.endpoints(tenantID: context.tenantID, limit: limit, after: after)
            return try JSONResponse.make(ListView(page) { WebhookEndpointView($0) })
        }

        router.get("webhooks/endpoints/:endpointID") { _, context in
            let id = try context.parameters.require("endpointID")
            return try JSONResponse.make(WebhookEndpointView(try await services.database.webhooks.endpoint(tenantID: context.tenantID, id: id)))
        }

        router.post("webhooks/endpoints/:endpointID/enable") { request, context in
            let id = try context.parameters.require("endpointID")
            try await TaskRoutes.expectEmptyBody(request)
            return try JSONResponse.make(WebhookEndpointView(try await services.database.webhooks.enable(tenantID: context.tenantID, id: id)))
        }

        router.get("webhooks/deliveries") { request, context in
            let query = QueryParameters(request)
            let (limit, after) = try query.page()
            let filter = WebhookStore.DeliveryFilter(
                statuses: try query.choices("status", as: WebhookDeliveryRecord.Status.self),
                taskID: try query.string("taskId"), sessionID: try query.string("sessionId"), endpointID: try query.string("endpointId")
            )
            try query.finish()
            let page = try await services.database.webhooks.deliveries(tenantID: context.tenantID, filter: filter, limit: limit, after: after)
            let cursor = services.eventCursors.forTenant(context.tenantID)
            return JSONResponse.list(page.items.map { WebhookDeliveryView($0, cursor: cursor) }, nextCursor: page.nextCursor)
        }

        router.get("webhooks/deliveries/:deliveryID") { _, context in
            let id = try context.parameters.require("deliveryID")
            let delivery = try await services.database.webhooks.delivery(tenantID: context.tenantID, id: id)
            return JSONResponse.make(writing: WebhookDeliveryView(delivery, cursor: services.eventCursors.forTenant(context.tenantID)))
        }

        router.post("webhooks/deliveries/:deliveryID/retry") { request, context in
            let id = try context.parameters.require("deliveryID")
            try await TaskRoutes.expectEmptyBody(request)
            let delivery = try await services.database.webhooks.retry(tenantID: context.tenantID, id: id)
            return JSONResponse.make(writing: WebhookDeliveryView(delivery, cursor: services.eventCursors.forTenant(context.tenantID)))
        }

        router.get("sessions/:sessionID/delegate") { _, context in
            let id = try context.parameters.require("sessionID")
            guard let endpoint = try await services.database.webhooks.delegate(tenantID: context.tenantID, sessionID: id) else {
                throw APIError.notFound("delegate: the session has the system-provided delegate")
            }
            return try JSONResponse.make(WebhookEndpointView(endpoint))
        }

        router.get("tasks/:taskID/delegate") { _, context in
            let id = try context.parameters.require("taskID")
            guard let delegate = try await services.database.webhooks.delegate(tenantID: context.tenantID, taskID: id) else {
                throw APIError.notFound("delegate: neither the task nor its session has one")
            }
            return try JSONResponse.make(WebhookEndpointView(delegate.endpoint))
        }

        router.post("sessions/:sessionID/delegate/rotateSecret") { request, context in
            let id = try context.parameters.require("sessionID")
            let secret = try await Self.newSecret(request)
            guard let endpoint = try await services.database.webhooks.delegate(tenantID: context.tenantID, sessionID: id) else {
                throw APIError.conflict("The session has no delegate, so it has no secret to rotate.")
            }
            let rotated = try await services.database.webhooks.rotateSecret(tenantID: context.tenantID, endpointID: endpoint.id, newSecret: secret)
            return try JSONResponse.make(WebhookEndpointView(rotated, secret: secret))
        }

        router.post("tasks/:taskID/delegate/rotateSecret") { request, context in
            let id = try context.parameters.require("taskID")
            let secret = try await Self.newSecret(request)
            guard let delegate = try await services.database.webhooks.delegate(tenantID: context.tenantID, taskID: id), delegate.isOwn else {
                throw APIError.conflict("The task has no delegate of its own; rotate its session's with POST /v1/sessions/{id}/delegate/rotateSecret.")
            }
            let rotated = try await services.database.webhooks.rotateSecret(tenantID: context.tenantID, endpointID: delegate.endpoint.id, newSecret: secret)
            return try JSONResponse.make(WebhookEndpointView(rotated, secret: secret))
        }
    }

    /// `{}`, no body, or `{"secret": "whsec_…"}` to choose the new secret.
    private static func newSecret(_ request: Request) async throws -> String {
        var secret: String?
        if let body = try await JSONBody.readOptional(request) {
            let reader = try FieldReader(body)
            secret = try reader.string("secret", maxLength: 256, allowEmpty: false)
            try reader.finish()
        }
        return try DelegateSecret.validatedOrNew(secret, field: "secret")
    }
}

/// Delegate secrets: a given one must be a valid `whsec_` secret; otherwise Ferry makes one.
/// Either way it is shown once, in the answer that set it.
enum DelegateSecret {
    static func validatedOrNew(_ secret: String?, field: String) throws -> String {
        guard let secret else {
            var random = SystemRandomNumberGenerator()
            return WebhookSecret.generate(using: &random)
        }
        do {
            _ = try WebhookSecret.parse(secret)
        } catch {
            throw ValidationError(field: field, message: "\(error).")
        }
        return secret
    }

    /// Fills in the delegate's secret before creation; returns it to show in the answer.
    static func prepare(_ delegate: inout DelegateSpec?) throws -> String? {
        guard var spec = delegate else { return nil }
        spec.secret = try validatedOrNew(spec.secret, field: "delegate.secret")
        delegate = spec
        return spec.secret
    }

    /// A creation answer (`view`) with `delegate: {id, url, events, status, …, secret}` added.
    static func answer(_ view: some Encodable, delegate endpoint: WebhookEndpointRecord?, secret: String?) throws -> any Encodable {
        guard let endpoint else { return view }
        guard var object = try JSONValue(encoding: view).objectValue else { return view }
        object["delegate"] = try JSONValue(encoding: WebhookEndpointView(endpoint, secret: secret))
        return JSONValue.object(object)
    }
}
