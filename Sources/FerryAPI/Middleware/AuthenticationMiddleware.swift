import FerryCore
import FerryStore
import Hummingbird

/// Identifies the tenant of a request from `Authorization: Bearer <API key>`. A missing,
/// malformed, unknown or revoked key gets the same 401, so nothing can be learnt by probing.
public struct TenantAuthenticationMiddleware: RouterMiddleware {
    public typealias Context = FerryRequestContext
    let tenants: TenantStore
    let rateLimiter = RateLimiter()

    public init(tenants: TenantStore) {
        self.tenants = tenants
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token = request.bearerToken else {
            throw APIError.unauthorized("Send the tenant's API key as \"Authorization: Bearer fy_live_…\".")
        }
        guard let key = APIKey.parse(token) else {
            throw APIError.unauthorized("The API key is malformed.")
        }
        guard let tenant = try await tenants.authenticate(key) else {
            throw APIError.unauthorized("The API key is not valid.")
        }
        guard tenant.status == .active else {
            throw APIError.forbidden("The tenant is suspended; ask the operator.")
        }
        if let rate = tenant.quotas.requestsPerSecond, let wait = rateLimiter.take(tenantID: tenant.id, perSecond: rate) {
            let seconds = max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
            var problem = APIError(
                status: .tooManyRequests, slug: "rate-limited", title: "Too many requests.",
                detail: "The tenant's quota is \(FieldReader.format(rate)) requests per second; retry after \(seconds) s."
            )
            problem.headers[.retryAfter] = String(seconds)
            throw problem
        }
        var context = context
        context.tenant = tenant
        return try await next(request, context)
    }
}

/// Admits operator requests carrying the operator token (`FERRY_ADMIN_TOKEN`).
public struct AdminAuthenticationMiddleware: RouterMiddleware {
    public typealias Context = FerryRequestContext
    let settings: SettingsStore

    public init(settings: SettingsStore) {
        self.settings = settings
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token = request.bearerToken else {
            throw APIError.unauthorized("Send the operator token as \"Authorization: Bearer <token>\".")
        }
        guard try await settings.isAdminToken(token) else {
            throw APIError.unauthorized("The operator token is not valid.")
        }
        var context = context
        context.isOperator = true
        return try await next(request, context)
    }
}

extension Request {
    /// The credentials of `Authorization: Bearer <token>`, if well-formed.
    var bearerToken: String? {
        guard let value = headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
