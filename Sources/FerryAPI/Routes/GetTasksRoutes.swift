import FerryCore
import FerryStore
import Hummingbird

/// URLSession's `getTasksWithCompletionHandler` and `getAllTasks`: the session's unfinished
/// tasks, whole and unpaginated, as URLSession hands them to the completion handler. A completed
/// task is no longer the session's. Ferry's paginated `GET /v1/sessions/{id}/tasks` lists every
/// task, completed ones included.
struct GetTasksRoutes {
    let services: APIServices

    func register(on router: RouterGroup<TenantContext>) {
        router.get("sessions/:sessionID/getTasks") { request, context in
            let id = try context.parameters.require("sessionID")
            try QueryParameters(request).finish()
            let tasks = try await services.database.tasks.unfinished(tenantID: context.tenantID, sessionID: id)
            return try JSONResponse.make(GetTasksView(tasks))
        }

        router.get("sessions/:sessionID/getAllTasks") { request, context in
            let id = try context.parameters.require("sessionID")
            try QueryParameters(request).finish()
            let tasks = try await services.database.tasks.unfinished(tenantID: context.tenantID, sessionID: id)
            return try JSONResponse.make(AllTasksView(tasks: tasks.map(TaskView.init)))
        }
    }
}
