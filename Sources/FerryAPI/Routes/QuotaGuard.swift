import FerryCore
import FerryStore

/// The tenant quotas checked when something is created (concurrency is enforced by the
/// schedulers, request rates by the authentication middleware).
struct QuotaGuard {
    let tenants: TenantStore

    /// `maxStoredBytes`: no new download or blob once the tenant's files reach the quota.
    func checkStorage(for tenant: TenantRecord) async throws {
        guard let limit = tenant.quotas.maxStoredBytes else { return }
        let stored = try await tenants.storedBytes(tenantID: tenant.id)
        guard stored < limit else {
            throw APIError.quotaExceeded(
                "The tenant stores \(stored) bytes, its maxStoredBytes quota is \(limit); delete files or blobs, or ask the operator."
            )
        }
    }

    /// The most an uploaded body (a blob, a streamed body) may hold: `maxTaskBytes`, within
    /// Ferry's own bound. A body that says it is longer is refused before anything is stored.
    static func uploadLimit(for tenant: TenantRecord, declaredLength: Int64?, of what: String) throws -> Int64 {
        let limit = min(BlobRoutes.maximumBlobBytes, tenant.quotas.maxTaskBytes ?? BlobRoutes.maximumBlobBytes)
        if let declaredLength, declaredLength > limit { throw uploadTooLarge(what, limit: limit) }
        return limit
    }

    /// The 413 of an upload past its `uploadLimit`, declared or found while it is read.
    static func uploadTooLarge(_ what: String, limit: Int64) -> APIError {
        APIError.tooLarge("\(what) may be at most \(limit) bytes.")
    }

    /// `maxTaskBytes` for a body known at creation.
    func checkTaskSize(_ bytes: Int64, for tenant: TenantRecord, field: String) throws {
        guard let limit = tenant.quotas.maxTaskBytes, bytes > limit else { return }
        var problem = APIError.quotaExceeded("\(field): has \(bytes) bytes; the tenant's maxTaskBytes quota is \(limit).")
        problem.field = field
        throw problem
    }
}

extension APIError {
    static func quotaExceeded(_ detail: String) -> APIError {
        APIError(status: .forbidden, slug: "quota-exceeded", title: "A quota of the tenant is exhausted.", detail: detail)
    }
}
