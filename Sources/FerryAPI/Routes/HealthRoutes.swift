import FerryStore
import Hummingbird
import Metrics
import NIOPosix

/// `/healthz` (the process answers) and `/readyz` (it can do its work).
struct HealthRoutes {
    let services: APIServices

    static let diskFreeBytes = Gauge(label: "ferry_disk_free_bytes")
    static let diskReserveBytes = Gauge(label: "ferry_disk_reserve_bytes")

    func register(on router: Router<FerryRequestContext>) {
        router.get("healthz") { _, _ in
            try JSONResponse.make(["status": "ok"])
        }
        router.get("readyz") { _, _ in
            var readiness = await services.readiness()
            readiness.disk = try await measureDisk()
            return try JSONResponse.make(readiness, status: readiness.isReady ? .ok : .serviceUnavailable)
        }
        if let exposition = services.metricsExposition {
            router.get("metrics") { _, _ in
                _ = try await measureDisk()
                var headers = HTTPFields()
                headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: exposition())))
            }
        }
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
