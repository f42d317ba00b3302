import FerryCore
import Foundation

/// A tenant as operators see it; `apiKey` only in the answer that created it.
struct TenantView: Encodable, Sendable {
    var id: String
    var name: String
    var status: String
    var quotas: TenantQuotas
    var createdAt: Date
    var apiKey: String?

    init(_ tenant: TenantRecord, apiKey: String? = nil) {
        id = tenant.id
        name = tenant.name
        status = tenant.status.rawValue
        quotas = tenant.quotas
        createdAt = tenant.createdAt
        self.apiKey = apiKey
    }
}
