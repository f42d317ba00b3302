import FerryCore
import FerryStore
import Foundation
import Hummingbird
import NIOPosix

/// `/v1/sessions`.
struct SessionRoutes {
    let services: APIServices

    func register(on router: RouterGroup<TenantContext>) {
        router.post("sessions") { request, context in
            let (_, body) = try await JSONBody.read(request, limit: JSONBody.smallLimit)
            var creation = try SessionCreation(validating: body, urlChecker: services.urlChecker)
            let secret = try DelegateSecret.prepare(&creation.delegate)
            let (session, reattached) = try await services.database.sessions.create(tenantID: context.tenantID, creation)
            let delegate = secret == nil ? nil : try await services.database.webhooks.delegate(tenantID: context.tenantID, sessionID: session.id)
            return try JSONResponse.make(
                try DelegateSecret.answer(SessionView(session), delegate: delegate, secret: secret), status: reattached ? .ok : .created,
                headers: [.location: "/v1/sessions/\(session.id)"]
            )
        }

        router.get("sessions") { request, context in
            let (limit, after) = try QueryParameters.page(of: request)
            let page = try await services.database.sessions.list(tenantID: context.tenantID, limit: limit, after: after)
            return try JSONResponse.make(ListView(page, SessionView.init))
        }

        router.get("sessions/:sessionID") { _, context in
            let id = try context.parameters.require("sessionID")
            return try JSONResponse.make(SessionView(try await services.database.sessions.find(tenantID: context.tenantID, id: id)))
        }

        // URLSession's one settable property: `sessionDescription`.
        router.patch("sessions/:sessionID") { request, context in
            let id = try context.parameters.require("sessionID")
            let (_, body) = try await JSONBody.read(request, limit: JSONBody.smallLimit)
            let update = try SessionUpdate(validating: body)
            return try JSONResponse.make(SessionView(try await services.database.sessions.update(tenantID: context.tenantID, sessionID: id, update)))
        }

        let invalidations: [(String, SessionStore.Invalidation)] = [
            ("finishTasksAndInvalidate", .finishTasks), ("invalidateAndCancel", .cancelTasks),
        ]
        for (name, invalidation) in invalidations {
            router.post("sessions/:sessionID/\(name)") { request, context in
                let id = try context.parameters.require("sessionID")
                try await TaskRoutes.expectEmptyBody(request)
                let session = try await services.database.sessions.invalidate(
                    tenantID: context.tenantID, sessionID: id, invalidation, resumeData: services.resumeData
                )
                return try JSONResponse.make(SessionView(session))
            }
        }

        router.post("sessions/:sessionID/reset") { request, context in
            let id = try context.parameters.require("sessionID")
            try await TaskRoutes.expectEmptyBody(request)
            let (downloads, partials, cacheBodies) = try await services.database.sessions.reset(tenantID: context.tenantID, sessionID: id)
            let files = services.files
            let tenantID = context.tenantID
            let paths = try downloads.map { try files.path(.downloads, tenantID: tenantID, name: $0) }
                + partials.map { try files.path(.partial, tenantID: tenantID, name: $0) }
                + cacheBodies.map { try files.path(.cache, tenantID: tenantID, name: $0) }
            try await NIOThreadPool.singleton.runIfActive { for path in paths { unlink(path) } }
            return try JSONResponse.make(SessionView(try await services.database.sessions.find(tenantID: tenantID, id: id)))
        }

        // Cookies, credentials and the cache are written through to storage as they change; what
        // remains in memory is the running transfers' progress, checkpointed by their instances at
        // the next heartbeat. The session's next requests use new connections.
        router.post("sessions/:sessionID/flush") { request, context in
            let id = try context.parameters.require("sessionID")
            try await TaskRoutes.expectEmptyBody(request)
            return try JSONResponse.make(SessionView(try await services.database.sessions.flush(tenantID: context.tenantID, sessionID: id)))
        }

        router.get("sessions/:sessionID/tasks") { request, context in
            let id = try context.parameters.require("sessionID")
            let query = QueryParameters(request)
            let (limit, after) = try query.page()
            let filter = TaskStore.ListFilter(states: try query.choices("state", as: TaskState.self), kinds: try query.choices("kind", as: TaskKind.self))
            try query.finish()
            let page = try await services.database.tasks.list(tenantID: context.tenantID, sessionID: id, filter: filter, limit: limit, after: after)
            return try JSONResponse.make(ListView(page, TaskView.init))
        }
    }
}
