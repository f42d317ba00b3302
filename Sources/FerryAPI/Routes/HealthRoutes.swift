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
        if let exposition = services.metricsExposition {
            router.get("metrics") { _, _ in
                var headers = HTTPFields()
                headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: exposition())))
            }
        }
    }
}
