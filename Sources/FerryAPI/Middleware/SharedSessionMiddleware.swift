import FerryStore
import Hummingbird

/// `URLSession.shared`: `shared` in place of a session id (`/v1/sessions/shared/tasks`) names
/// the tenant's shared session, made on first use. Resolved here, once for every session route,
/// so no route has to know; each tenant's `shared` is its own.
struct SharedSessionMiddleware: RouterMiddleware {
    typealias Context = TenantContext
    let sessions: SessionStore

    static let alias = "shared"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.parameters.get("sessionID") == Self.alias else { return try await next(request, context) }
        var context = context
        let session = try await sessions.shared(tenantID: context.tenantID)
        context.coreContext.parameters["sessionID"] = Substring(session.id)
        return try await next(request, context)
    }
}
