import FerryCore
import FerryStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// An instance's webhook delivery: reads the event outbox past a shared cursor and creates
/// deliveries (fan-out), claims due deliveries under short leases and sends them on one
/// dedicated curl thread, records every attempt and plans retries, and answers the engine's
/// decision events directly (`DecisionGateway`). A `Service`: a graceful shutdown stops
/// claiming and lets the requests in flight finish (each is bounded by its timeout).
public final class WebhookService: Service, Sendable {
    let configuration: WebhookConfiguration
    let ledger: WebhookLedger
    /// For the link in a stub body (see `EventRecord.webhookBody`).
    let eventCursors: EventCursors
    let hub: NotificationHub
    let logger: Logger
    let transport: WebhookTransport
    let planner: DeliveryPlanner
    let recorder: DeliveredAttemptRecorder
    /// Rung by new events, decisions, and while a horizon waits to become safe.
    let fanOutBell = WakeSignal()
    /// Rung by new deliveries, finished attempts, retries, enabled endpoints and answered
    /// decisions. Only a ring that asks for it (`callForClaim`), the idle poll or a next due
    /// time makes the loop claim: room freed by an answered decision goes to the next waiting
    /// stream of its endpoint first, if the endpoint is below its limit (`decisionEnded`).
    let deliveryBell = WakeSignal()
    /// Set with every ring of `deliveryBell` that asks for a claim; the loop clears it as it claims.
    let claimWanted = Atomic<Bool>(false)
    /// The endpoints of decisions answered (or given up) since the delivery loop last looked,
    /// once per decision: each may have freed a stream's room there (not when decisions, sent
    /// whatever the limit, still fill it).
    let decisionsEnded = Mutex<[String]>([])
    /// Whether the last claim left ready heads for other reasons than their endpoint being full
    /// (a tenant's limit, the instance's, a lock another claim held).
    let headsLeftBesidesFullEndpoints = Atomic<Bool>(false)
    /// Claims across every pending delivery this instance has made (also `ferry_webhook_claims_total`).
    let claimsMade = Atomic<Int>(0)
    /// Rung at shutdown: ends the fan-out's wait for more events, which new events must not ring
    /// (that wait is what gathers them). Decisions do not wait for the fan-out: `decide` makes
    /// the deliveries of its task's earlier events itself.
    let shutdownBell = WakeSignal()
    let inFlight = Atomic<Int>(0)
    /// Endpoints the last claim found full: new deliveries for them alone do not wake the delivery loop.
    let fullEndpoints = FullEndpoints()
    /// Per endpoint, the ready heads the last claim left for want of room, oldest first: what a
    /// slot whose stream runs out takes next (see `deliverStream`).
    let candidates = Mutex<[String: CandidateQueue]>([:])
    /// Sessions with attempts recorded since the delivery loop last checked whether a background
    /// session's events are all delivered (`session.didFinishEvents`): one check per loop turn
    /// for all of them, not a transaction per attempt.
    let sessionsToCheckForFinishedEvents = Mutex<Set<String>>([])
    let isStopping = Atomic<Bool>(false)
    private let seededJitter: Mutex<SplitMix64?>

    public init(
        configuration: WebhookConfiguration, database: FerryDatabase, eventCursors: EventCursors, hub: NotificationHub, logger: Logger
    ) throws {
        self.configuration = configuration
        self.eventCursors = eventCursors
        self.ledger = database.webhookLedger(instanceID: configuration.instanceID)
        self.hub = hub
        self.logger = logger
        self.recorder = DeliveredAttemptRecorder(ledger: ledger, tryingFor: configuration.leaseDuration, logger: logger)
        self.planner = DeliveryPlanner(schedule: configuration.schedule, disableAfter: configuration.disableAfterFailingFor)
        self.seededJitter = Mutex(configuration.jitterSeed.map { SplitMix64(seed: $0) })
        self.transport = try WebhookTransport(
            settings: .init(
                addressPolicy: configuration.addressPolicy, userAgent: configuration.userAgent,
                connectTimeout: configuration.connectTimeout, maximumResponseBytes: configuration.maximumResponseBytes
            ),
            logger: logger
        )
    }

    public func run() async throws {
        logger.info("webhook delivery started", metadata: ["instance": "\(configuration.instanceID)"])
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.runFanOut() }
            group.addTask {
                await self.runDeliveries()
                // Every attempt in flight has been handed to the recorder by now.
                self.recorder.close()
            }
            group.addTask {
                // A background session's events may all be delivered now (`session.didFinishEvents`).
                // Checked on the delivery loop's next turn; ringing it for every write made it
                // claim after every write.
                await self.recorder.run { written in
                    self.sessionsToCheckForFinishedEvents.withLock { $0.formUnion(written.map(\.sessionID)) }
                }
                // The delivery loop has checked for the last time before the recorder wrote the
                // attempts it was left with at shutdown: their sessions may be done now.
                await self.checkFinishedEvents()
            }
            let listener = Task { await self.listen() }
            // Until the service group shuts down (or is cancelled).
            try? await gracefulShutdown()
            isStopping.store(true, ordering: .releasing)
            fanOutBell.ring()
            shutdownBell.ring()
            deliveryBell.ring()
            listener.cancel()
            await listener.value
        }
        await transport.stop()
        logger.info("webhook delivery stopped", metadata: ["instance": "\(configuration.instanceID)"])
    }

    var shouldStop: Bool { isStopping.load(ordering: .acquiring) }

    /// Notifications of new events (from any instance) wake the fan-out; a retry or an
    /// enabled endpoint wakes the delivery loop. After a reconnection, both re-check.
    private func listen() async {
        for await signal in hub.subscribe(to: NotificationChannel.events) {
            switch signal {
            case .notification(let payload) where payload == WebhookLedger.deliveriesChangedPayload:
                callForClaim()
            case .notification:
                fanOutBell.ring()
            case .resync:
                fullEndpoints.roomFreed()
                fanOutBell.ring()
                callForClaim()
            }
        }
    }

    /// Wakes the delivery loop for a claim across every pending delivery.
    func callForClaim() {
        claimWanted.store(true, ordering: .releasing)
        deliveryBell.ring()
    }

    /// Plans after an attempt, with the seeded jitter in tests and the system's random source otherwise.
    func plan(
        _ outcome: AttemptOutcome, attemptNumber: Int, isDecision: Bool, failingSince: Date?, now: Date
    ) -> DeliveryPlan {
        let seeded = seededJitter.withLock { state -> DeliveryPlan? in
            guard var generator = state else { return nil }
            defer { state = generator }
            return planner.plan(outcome, attemptNumber: attemptNumber, isDecision: isDecision, failingSince: failingSince, now: now, using: &generator)
        }
        if let seeded { return seeded }
        var generator = SystemRandomNumberGenerator()
        return planner.plan(outcome, attemptNumber: attemptNumber, isDecision: isDecision, failingSince: failingSince, now: now, using: &generator)
    }
}
