import FerryCore
import Foundation

/// How an instance delivers webhooks. The defaults are production values; tests shorten the
/// schedule and the polling.
public struct WebhookConfiguration: Sendable {
    /// This instance's name in delivery leases.
    public var instanceID: String
    /// The SSRF guard, the same as for transfers: checked on every connection.
    public var addressPolicy: AddressPolicy
    public var schedule: WebhookRetrySchedule
    /// The longest a delivery attempt may take, connection included.
    public var requestTimeout: Duration
    public var connectTimeout: Duration
    /// The longest `decide` waits, whatever the engine asks for.
    public var maximumDecisionTimeout: Duration
    /// How long after its event a decision delivery that nobody decided (the transfer stopped
    /// first) is sent by the queue like any other event.
    public var decisionGrace: Duration
    /// An endpoint whose every attempt failed for this long is disabled.
    public var disableAfterFailingFor: Duration
    /// Requests in flight at once: in all, to one endpoint (a cap on each delegate's own
    /// `maximumInFlight`), and for one tenant.
    public var maximumInFlight: Int
    public var maximumInFlightPerEndpoint: Int
    public var maximumInFlightPerTenant: Int
    /// How long a claimed delivery stays this instance's; longer than `requestTimeout`.
    public var leaseDuration: Duration
    /// How often to look for due work when no notification arrives.
    public var idlePollInterval: Duration
    public var fanOutBatchSize: Int
    /// How much of a response is read (the rest is discarded) and how much of it is kept in the
    /// attempt record (never for decisions).
    public var maximumResponseBytes: Int
    public var responseExcerptBytes: Int
    public var userAgent: String
    /// The clock retry times are computed with.
    public var now: @Sendable () -> Date
    /// Seeds the retry jitter for reproducible tests; nil uses the system's random source.
    public var jitterSeed: UInt64?

    public init(
        instanceID: String,
        addressPolicy: AddressPolicy,
        schedule: WebhookRetrySchedule = WebhookRetrySchedule(),
        requestTimeout: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(10),
        maximumDecisionTimeout: Duration = .seconds(10),
        decisionGrace: Duration = .seconds(60),
        disableAfterFailingFor: Duration = .seconds(5 * 86400),
        maximumInFlight: Int = 256,
        maximumInFlightPerEndpoint: Int = DelegateSpec.maximumInFlightRange.upperBound,
        maximumInFlightPerTenant: Int = 64,
        leaseDuration: Duration = .seconds(30),
        idlePollInterval: Duration = .seconds(1),
        fanOutBatchSize: Int = 500,
        maximumResponseBytes: Int = 64 * 1024,
        responseExcerptBytes: Int = 1024,
        userAgent: String = "Ferry-Webhooks/1.0",
        now: @escaping @Sendable () -> Date = { Date() },
        jitterSeed: UInt64? = nil
    ) {
        self.instanceID = instanceID
        self.addressPolicy = addressPolicy
        self.schedule = schedule
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.maximumDecisionTimeout = maximumDecisionTimeout
        self.decisionGrace = decisionGrace
        self.disableAfterFailingFor = disableAfterFailingFor
        self.maximumInFlight = maximumInFlight
        self.maximumInFlightPerEndpoint = maximumInFlightPerEndpoint
        self.maximumInFlightPerTenant = maximumInFlightPerTenant
        self.leaseDuration = leaseDuration
        self.idlePollInterval = idlePollInterval
        self.fanOutBatchSize = fanOutBatchSize
        self.maximumResponseBytes = maximumResponseBytes
        self.responseExcerptBytes = responseExcerptBytes
        self.userAgent = userAgent
        self.now = now
        self.jitterSeed = jitterSeed
    }
}
