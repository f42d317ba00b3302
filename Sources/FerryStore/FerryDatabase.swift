import Logging
import Postgres

/// The store's entry point: one pool and the repositories over it.
public struct FerryDatabase: Sendable {
    public let pool: PostgresPool
    /// Ephemeral sessions' credentials: in memory, shared by the API and the engine of a process.
    public let ephemeralCredentials = EphemeralCredentials()
    /// The operator token last read: checked without a query each, and while PostgreSQL is away.
    public let adminTokens = AdminTokenMemory()

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    public var tenants: TenantStore { TenantStore(pool: pool) }
    public var sessions: SessionStore { SessionStore(pool: pool) }
    public var tasks: TaskStore { TaskStore(pool: pool) }
    public var settings: SettingsStore { SettingsStore(pool: pool, adminTokens: adminTokens) }
    public var storage: StorageReferences { StorageReferences(pool: pool) }
    public var blobs: BlobStore { BlobStore(pool: pool) }
    public var credentials: CredentialStore { CredentialStore(pool: pool, ephemeral: ephemeralCredentials) }
    public var cookies: CookieStore { CookieStore(pool: pool) }
    public var cache: CacheStore { CacheStore(pool: pool) }
    public var statistics: TaskStatistics { TaskStatistics(pool: pool) }
    public var overview: OverviewStore { OverviewStore(pool: pool) }

    public func transfers(instanceID: String, leaseDuration: Duration = .seconds(15)) -> TransferLedger {
        TransferLedger(pool: pool, instanceID: instanceID, leaseDuration: leaseDuration, ephemeralCredentials: ephemeralCredentials)
    }
}
