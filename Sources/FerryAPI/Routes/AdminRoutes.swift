import FerryCore
import FerryStore
import Foundation
import Hummingbird

/// Operator routes under `/admin/v1`.
struct AdminRoutes {
    let services: APIServices

    func register(on router: RouterGroup<OperatorContext>) {
        router.post("tenants") { request, _ in
            let (_, body) = try await JSONBody.read(request, limit: JSONBody.smallLimit)
            let creation = try TenantCreation(validating: body)
            let (tenant, apiKey) = try await services.database.tenants.create(name: creation.name, quotas: creation.quotas)
            return try JSONResponse.make(TenantView(tenant, apiKey: apiKey), status: .created, headers: [.location: "/admin/v1/tenants/\(tenant.id)"])
        }

        router.get("tenants") { request, _ in
            let (limit, after) = try QueryParameters.page(of: request)
            return try JSONResponse.make(ListView(try await services.database.tenants.list(limit: limit, after: after)) { TenantView($0) })
        }

        router.get("tenants/:tenantID") { _, context in
            let id = try context.parameters.require("tenantID")
            guard let tenant = try await services.database.tenants.find(id: id) else { throw APIError.notFound("tenant") }
            return try JSONResponse.make(TenantView(tenant))
        }

        router.patch("tenants/:tenantID") { request, context in
            let id = try context.parameters.require("tenantID")
            let (_, body) = try await JSONBody.read(request, limit: JSONBody.smallLimit)
            let update = try TenantStore.Update(validating: body)
            return try JSONResponse.make(TenantView(try await services.database.tenants.update(id: id, update)))
        }

        for (name, status) in [("suspend", TenantStatus.suspended), ("activate", .active)] {
            router.post("tenants/:tenantID/\(name)") { request, context in
                let id = try context.parameters.require("tenantID")
                try await TaskRoutes.expectEmptyBody(request)
                var update = TenantStore.Update()
                update.status = status
                return try JSONResponse.make(TenantView(try await services.database.tenants.update(id: id, update)))
            }
        }

        router.get("tenants/:tenantID/keys") { _, context in
            let keys = try await services.database.tenants.keys(tenantID: try context.parameters.require("tenantID"))
            return try JSONResponse.make(["data": keys.map { APIKeyView($0) }])
        }

        router.post("tenants/:tenantID/keys") { request, context in
            try await TaskRoutes.expectEmptyBody(request)
            let (key, apiKey) = try await services.database.tenants.addKey(tenantID: try context.parameters.require("tenantID"))
            return try JSONResponse.make(APIKeyView(key, apiKey: apiKey), status: .created)
        }

        router.delete("tenants/:tenantID/keys/:keyID") { _, context in
            try await services.database.tenants.revokeKey(
                tenantID: try context.parameters.require("tenantID"), keyID: try context.parameters.require("keyID")
            )
            return Response(status: .noContent)
        }

        router.get("tasks/:taskID") { _, context in
            let task = try await services.database.overview.task(id: try context.parameters.require("taskID"))
            return try JSONResponse.make(SupportTaskView(tenantID: task.tenantID, task: task))
        }

        router.get("overview") { request, _ in
            let overview = try await services.database.overview.overview()
            if request.prefersPlainText {
                var headers = HTTPFields()
                headers[.contentType] = "text/plain; charset=utf-8"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: OverviewText.render(overview))))
            }
            return try JSONResponse.make(overview)
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
            maxConcurrentTransfers: try reader.integer("maxConcurrentTransfers", in: Self.concurrencyRange),
            maxStoredBytes: try reader.integer("maxStoredBytes", in: Self.bytesRange).map(Int64.init),
            requestsPerSecond: try reader.number("requestsPerSecond", in: Self.rateRange),
            maxTaskBytes: try reader.integer("maxTaskBytes", in: Self.bytesRange).map(Int64.init)
        )
        try reader.finish()
    }

    static let concurrencyRange = 1...1_000_000
    static let bytesRange = 1...Int(Int64.max / 2)
    static let rateRange = 0.001...1_000_000.0
}

extension TenantStore.Update {
    /// `PATCH /admin/v1/tenants/{id}`: `{name?, status?, quotas?}`; a quota given as null is lifted.
    init(validating value: JSONValue) throws {
        self.init()
        let reader = try FieldReader(value)
        name = try reader.string("name", maxLength: 200, allowEmpty: false)
        status = try reader.choice("status", as: TenantStatus.self)
        if let quotas = try reader.object("quotas") {
            // Absent: unchanged; null: lifted (`.some(nil)`); a value: set.
            func lifted<T>(_ key: String, _ read: () throws -> T?) rethrows -> T?? {
                if quotas.isExplicitNull(key) { return .some(nil) }
                guard quotas.contains(key) else { return nil }
                return .some(try read())
            }
            maxConcurrentTransfers = try lifted("maxConcurrentTransfers") { try quotas.integer("maxConcurrentTransfers", in: TenantQuotas.concurrencyRange) }
            maxStoredBytes = try lifted("maxStoredBytes") { try quotas.integer("maxStoredBytes", in: TenantQuotas.bytesRange).map(Int64.init) }
            requestsPerSecond = try lifted("requestsPerSecond") { try quotas.number("requestsPerSecond", in: TenantQuotas.rateRange) }
            maxTaskBytes = try lifted("maxTaskBytes") { try quotas.integer("maxTaskBytes", in: TenantQuotas.bytesRange).map(Int64.init) }
            try quotas.finish()
        }
        try reader.finish()
    }
}

struct APIKeyView: Encodable, Sendable {
    var id: String
    /// The first characters of the key's random part, to recognise it.
    var prefix: String
    var createdAt: Date
    var lastUsedAt: Date?
    var revokedAt: Date?
    /// Only in the answer that created the key.
    var apiKey: String?

    init(_ key: TenantStore.KeyRecord, apiKey: String? = nil) {
        id = key.id
        prefix = "fy_live_" + key.lookupPrefix
        createdAt = key.createdAt
        lastUsedAt = key.lastUsedAt
        revokedAt = key.revokedAt
        self.apiKey = apiKey
    }
}

extension Request {
    /// Whether the client asked for plain text over JSON (`curl -H 'Accept: text/plain'`).
    var prefersPlainText: Bool {
        guard let accept = headers[.accept]?.lowercased() else { return false }
        return accept.contains("text/plain") && !accept.hasPrefix("application/json")
    }
}
