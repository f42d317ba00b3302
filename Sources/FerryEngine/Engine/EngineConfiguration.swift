import FerryCore
import FerryStore
import Foundation

/// How an instance's transfer engine runs.
public struct EngineConfiguration: Sendable {
    /// This instance's name in leases and logs.
    public var instanceID: String
    /// Dedicated transfer threads (`FERRY_WORKERS`).
    public var workerCount: Int
    /// Concurrent transfers each worker drives. curl's multi interface handles thousands of
    /// mostly idle transfers on one thread; the bound keeps one instance from claiming more
    /// work than it can run while other instances sit idle.
    public var transfersPerWorker: Int
    public static let defaultTransfersPerWorker = 5_000
    /// Threads of the file pool (creating, syncing and renaming transfers' files): one per
    /// core, from two to four. More than the cores made small downloads slower on two cores:
    /// the threads spin on the partial folder's lock (every create and rename takes it) and take
    /// CPU from the database; four ran the small-files bench in a median of 1.76 and 1.84 s,
    /// two in 1.55 and 1.52 s. More than four would mostly wait on that same lock.
    public var fileThreadCount = min(4, max(2, ProcessInfo.processInfo.activeProcessorCount))
    public var dataDirectory: String
    public var addressPolicy: AddressPolicy
    /// The most a data or upload task keeps of a response body (`FERRY_MAX_DATA_TASK_BYTES`).
    public var maximumDataBytes: Int
    public var heartbeatInterval: Duration
    public var leaseDuration: Duration
    public var reaperInterval: Duration
    /// How long a graceful shutdown may take to checkpoint and hand back running transfers.
    public var shutdownGracePeriod: Duration
    public var version: String
    public var retryPolicy: TransferRetryPolicy
    /// Whether this instance reconciles the data folder with the database (at start and hourly).
    public var reconcilesStorage = true
    /// How long a transfer waits for the receiver of a decision event (SAFETY.md: at most 10 s).
    public var decisionTimeout: Duration = .seconds(10)
    /// The data folder's free space and reserve: downloads stop at the reserve. Nil: no reserve.
    public var diskSpace: DiskSpace?
    /// What all transfers together may hold in memory (`FERRY_MEMORY_BUDGET_BYTES`): three
    /// quarters for data tasks' bodies, a quarter for ephemeral sessions' URL caches.
    public var memoryBudgetBytes = MemoryBudget.defaultCapacity

    public init(
        instanceID: String,
        workerCount: Int,
        dataDirectory: String,
        addressPolicy: AddressPolicy,
        transfersPerWorker: Int = EngineConfiguration.defaultTransfersPerWorker,
        maximumDataBytes: Int = 16 * 1024 * 1024,
        heartbeatInterval: Duration = .seconds(1),
        leaseDuration: Duration = .seconds(15),
        reaperInterval: Duration = .seconds(3),
        shutdownGracePeriod: Duration = .seconds(5),
        version: String = "0.1.0",
        retryPolicy: TransferRetryPolicy = TransferRetryPolicy()
    ) {
        self.instanceID = instanceID
        self.workerCount = max(1, workerCount)
        self.dataDirectory = dataDirectory
        self.addressPolicy = addressPolicy
        self.transfersPerWorker = max(1, transfersPerWorker)
        self.maximumDataBytes = maximumDataBytes
        self.heartbeatInterval = heartbeatInterval
        self.leaseDuration = leaseDuration
        self.reaperInterval = reaperInterval
        self.shutdownGracePeriod = shutdownGracePeriod
        self.version = version
        self.retryPolicy = retryPolicy
    }

    /// Transfers this instance runs (or keeps waiting for a connection) at once.
    public var capacity: Int { workerCount * transfersPerWorker }
    var userAgent: String { "Ferry/\(version)" }
}
