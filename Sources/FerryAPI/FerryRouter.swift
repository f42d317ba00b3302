import FerryStore
import Hummingbird

/// Builds the whole HTTP API.
public func makeRouter(services: APIServices) -> Router<FerryRequestContext> {
    let router = Router(context: FerryRequestContext.self)
    // Outermost: it reads what is left of a body after the answer is known, errors included.
    router.add(middleware: RequestBodyDrainMiddleware())
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: MetricsMiddleware<FerryRequestContext>())
    router.add(middleware: RequestLimitsMiddleware())
    HealthRoutes(services: services).register(on: router)
    OpenAPIRoutes().register(on: router)

    let admin = router.group("admin/v1")
        .add(middleware: AdminAuthenticationMiddleware(settings: services.database.settings))
        .group(context: OperatorContext.self)
    AdminRoutes(services: services).register(on: admin)

    let v1 = router.group("v1")
        .add(middleware: TenantAuthenticationMiddleware(tenants: services.database.tenants))
        .group(context: TenantContext.self)
        .add(middleware: SharedSessionMiddleware(sessions: services.database.sessions))
    SessionRoutes(services: services).register(on: v1)
    TaskRoutes(services: services).register(on: v1)
    GetTasksRoutes(services: services).register(on: v1)
    TaskBatchRoutes(services: services).register(on: v1)
    TaskContentRoutes(services: services).register(on: v1)
    WebhookRoutes(services: services).register(on: v1)
    EventRoutes(services: services).register(on: v1)
    BlobRoutes(services: services).register(on: v1)
    CredentialRoutes(services: services).register(on: v1)
    BodyStreamRoutes(services: services).register(on: v1)
    return router
}
