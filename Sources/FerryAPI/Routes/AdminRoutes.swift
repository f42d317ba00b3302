import FerryCore
import FerryStore
import Hummingbird

/// Operator routes under `/admin/v1`.
struct AdminRoutes {
    let services: APIServices

    func register(on router: RouterGroup<OperatorContext>) {
        router.post("tenants") { request, _ in
            let (_, body) = try await JSONBody.read(request, limit: JSONBody.smallLimit)
            let creation = try TenantCreation(validating: body)
            let (tenant, apiKey) = try await services.database.tenants.create(name: creation.name, quotas: creation.quotas)
            return try JSONResponse.make(TenantView(tenant, apiKey: apiKey), status: .created)
        }
    }
}

/// A validated `POST /admin/v1/tenants` body.
struct TenantCreation {
    var name: String
    var quotas: TenantQuotas

    init(validating value: JSONValue) throws {
        let reader = try FieldReader(value)
        name = try reader.requiredString("name", maxLength: 200)
        quotas = try reader.object("quotas").map(TenantQuotas.init(validating:)) ?? TenantQuotas()
        try reader.finish()
    }
}

extension TenantQuotas {
    init(validating reader: FieldReader) throws {
        self.init(
            maxConcurrentTransfers: try reader.integer("maxConcurrentTransfers", in: 1...1_000_000),
            maxStoredBytes: try reader.integer("maxStoredBytes", in: 1...Int(Int64.max / 2)).map(Int64.init),
            requestsPerSecond: try reader.number("requestsPerSecond", in: 0.001...1_000_000),
            maxTaskBytes: try reader.integer("maxTaskBytes", in: 1...Int(Int64.max / 2)).map(Int64.init)
        )
        try reader.finish()
    }
}
