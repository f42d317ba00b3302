import Foundation

/// A body uploaded with `PUT /v1/blobs`, sent by upload tasks created with `body: {blob}`.
public struct BlobRecord: Sendable, Equatable {
    public var id: String
    public var tenantID: String
    public var size: Int64
    /// Hex SHA-256 of the bytes.
    public var sha256: String
    public var createdAt: Date

    public init(id: String, tenantID: String, size: Int64, sha256: String, createdAt: Date) {
        self.id = id
        self.tenantID = tenantID
        self.size = size
        self.sha256 = sha256
        self.createdAt = createdAt
    }
}
