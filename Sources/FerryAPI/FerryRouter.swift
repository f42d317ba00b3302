import FerryStore
import Hummingbird

/// Builds the whole HTTP API.
public func makeRouter(services: APIServices) -> Router<FerryRequestContext> {
    let router = Router(context: FerryRequestContext.self)
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: RequestLimitsMiddleware())
    HealthRoutes(services: services).register(on: router)

    let admin = router.group("admin/v1")
        .add(middleware: AdminAuthenticationMiddleware(settings: services.database.settings))
        .group(context: OperatorContext.self)
    AdminRoutes(services: services).register(on: admin)

    let v1 = router.group("v1")
        .add(middleware: TenantAuthenticationMiddleware(tenants: services.database.tenants))
        .group(context: TenantContext.self)
    SessionRoutes(services: services).register(on: v1)
    TaskRoutes(services: services).register(on: v1)
    TaskContentRoutes(services: services).register(on: v1)
    return router
}
