import FerryCore
import FerryStore
import Hummingbird

/// `/v1/sessions`.
struct SessionRoutes {
    let services: APIServices

    func register(on router: RouterGroup<TenantContext>) {
        router.post("sessions") { request, context in
            let (_, body) = try await JSONBody.read(request, limit: JSONBody.smallLimit)
            let creation = try SessionCreation(validating: body, urlChecker: services.urlChecker)
            if creation.delegate != nil {
                throw APIError.badRequest("delegate: webhook delegates are not available yet; poll the task or long-poll with ?wait=.", field: "delegate")
            }
            let (session, reattached) = try await services.database.sessions.create(tenantID: context.tenantID, creation)
            return try JSONResponse.make(SessionView(session), status: reattached ? .ok : .created)
        }

        router.get("sessions") { request, context in
            let (limit, after) = try QueryParameters(request).page()
            let page = try await services.database.sessions.list(tenantID: context.tenantID, limit: limit, after: after)
            return try JSONResponse.make(ListView(page, SessionView.init))
        }

        router.get("sessions/:sessionID") { _, context in
            let id = try context.parameters.require("sessionID")
            return try JSONResponse.make(SessionView(try await services.database.sessions.find(tenantID: context.tenantID, id: id)))
        }

        router.get("sessions/:sessionID/tasks") { request, context in
            let id = try context.parameters.require("sessionID")
            let query = QueryParameters(request)
            let (limit, after) = try query.page()
            let filter = TaskStore.ListFilter(states: try query.choices("state", as: TaskState.self), kinds: try query.choices("kind", as: TaskKind.self))
            let page = try await services.database.tasks.list(tenantID: context.tenantID, sessionID: id, filter: filter, limit: limit, after: after)
            return try JSONResponse.make(ListView(page, TaskView.init))
        }
    }
}
