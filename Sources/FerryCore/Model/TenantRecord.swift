import Foundation

/// Per-tenant limits; `nil` is unlimited.
public struct TenantQuotas: Codable, Sendable, Equatable {
    public var maxConcurrentTransfers: Int?
    public var maxStoredBytes: Int64?
    public var requestsPerSecond: Double?
    public var maxTaskBytes: Int64?

    enum CodingKeys: String, CodingKey {
        case maxConcurrentTransfers, maxStoredBytes, requestsPerSecond, maxTaskBytes
    }

    /// Unlimited quotas are written as explicit nulls, so every quota is visible in the answer.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(maxConcurrentTransfers, forKey: .maxConcurrentTransfers)
        try container.encode(maxStoredBytes, forKey: .maxStoredBytes)
        try container.encode(requestsPerSecond, forKey: .requestsPerSecond)
        try container.encode(maxTaskBytes, forKey: .maxTaskBytes)
    }

    public init(maxConcurrentTransfers: Int? = nil, maxStoredBytes: Int64? = nil, requestsPerSecond: Double? = nil, maxTaskBytes: Int64? = nil) {
        self.maxConcurrentTransfers = maxConcurrentTransfers
        self.maxStoredBytes = maxStoredBytes
        self.requestsPerSecond = requestsPerSecond
        self.maxTaskBytes = maxTaskBytes
    }
}

public enum TenantStatus: String, Codable, Sendable, CaseIterable {
    case active
    case suspended
}

public struct TenantRecord: Sendable, Equatable {
    public var id: String
    public var name: String
    public var status: TenantStatus
    public var quotas: TenantQuotas
    public var createdAt: Date

    public init(id: String, name: String, status: TenantStatus, quotas: TenantQuotas, createdAt: Date) {
        self.id = id
        self.name = name
        self.status = status
        self.quotas = quotas
        self.createdAt = createdAt
    }
}
