import Hummingbird

/// `/healthz` (the process answers) and `/readyz` (it can do its work).
struct HealthRoutes {
    let services: APIServices

    func register(on router: Router<FerryRequestContext>) {
        router.get("healthz") { _, _ in
            try JSONResponse.make(["status": "ok"])
        }
        router.get("readyz") { _, _ in
            let readiness = await services.readiness()
            return try JSONResponse.make(readiness, status: readiness.isReady ? .ok : .serviceUnavailable)
        }
    }
}
