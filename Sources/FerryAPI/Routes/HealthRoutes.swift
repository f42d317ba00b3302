import FerryStore
import Hummingbird
import Metrics
import NIOPosix

/// `/healthz` (the process answers), `/readyz` (it can do its work) and `/metrics` (Prometheus).
/// `/metrics` and `/readyz`'s disk figures are the operator's: they count every tenant's tasks,
/// transfers and bytes, and a tenant must not count another's.
struct HealthRoutes {
    let services: APIServices

    static let diskFreeBytes = Gauge(label: "ferry_disk_free_bytes")
    static let diskReserveBytes = Gauge(label: "ferry_disk_reserve_bytes")

    func register(on router: Router<FerryRequestContext>) {
        router.get("healthz") { _, _ in
            try JSONResponse.make(["status": "ok"])
        }
        router.get("readyz") { request, _ in
            var readiness = await services.readiness()
            let disk = try await measureDisk()
            // The database may be what is not ready: then nobody is known as the operator.
            let isOperator = (try? await isOperator(request)) ?? false
            readiness.disk = isOperator ? disk : disk.map(DiskReadiness.withoutFigures)
            return try JSONResponse.make(readiness, status: readiness.isReady ? .ok : .serviceUnavailable)
        }
        if let exposition = services.metricsExposition {
            router.group("metrics")
                .add(middleware: AdminAuthenticationMiddleware(settings: services.database.settings))
                .get { _, _ in
                _ = try await measureDisk()
                var headers = HTTPFields()
                headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: exposition())))
            }
        }
    }

    /// Whether the request carries the operator token (a public route may show the operator more).
    private func isOperator(_ request: Request) async throws -> Bool {
        guard let token = request.bearerToken else { return false }
        return try await services.database.settings.isAdminToken(token)
    }

    /// The data folder's free space (a statvfs, on NIO's thread pool), also set on the gauges.
    private func measureDisk() async throws -> DiskReadiness? {
        guard let disk = services.diskSpace else { return nil }
        guard let free = try await NIOThreadPool.singleton.runIfActive({ disk.freeBytes() }) else { return nil }
        Self.diskFreeBytes.record(free)
        Self.diskReserveBytes.record(disk.reserveBytes)
        return DiskReadiness(freeBytes: free, reserveBytes: disk.reserveBytes)
    }
}
