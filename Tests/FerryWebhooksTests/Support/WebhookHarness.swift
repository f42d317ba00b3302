import FerryCore
@testable import FerryStore
import FerryTestSupport
import FerryWebhooks
import Foundation
import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// A migrated database with a tenant, the notification hub, and a webhook service that a test
/// can stop and start again (a restart), with a fast retry schedule and loopback allowed.
final class WebhookHarness: Sendable {
    let test: TestDatabase
    let hub: NotificationHub
    let tenant: TenantRecord
    let apiKey: String
    private let hubGroup: ServiceGroup
    private let hubTask: Task<Void, any Error>
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>, service: WebhookService)?>(nil)
    private let others = Mutex<[Instance]>([])

    /// Another instance's webhook service on the same database.
    struct Instance: Sendable {
        let group: ServiceGroup
        let task: Task<Void, any Error>

        func stop() async {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
        }
    }

    var database: FerryDatabase { test.database }
    var pool: PostgresPool { test.database.pool }

    static let loopback = AddressPolicy(allowedNetworks: (try? AddressPolicy.parseAllowList("127.0.0.0/8")) ?? [])

    /// Fast for tests: retries after 200 ms, 400 ms, 600 ms, no jitter, 2 s timeouts.
    static func testConfiguration(instanceID: String = "hooks-test") -> WebhookConfiguration {
        WebhookConfiguration(
            instanceID: instanceID,
            addressPolicy: loopback,
            schedule: WebhookRetrySchedule(delays: [.milliseconds(200), .milliseconds(400), .milliseconds(600)], jitter: 0),
            requestTimeout: .seconds(2),
            connectTimeout: .seconds(2),
            decisionGrace: .seconds(30),
            leaseDuration: .seconds(5),
            idlePollInterval: .milliseconds(50)
        )
    }

    private init(test: TestDatabase, tenant: TenantRecord, apiKey: String) {
        self.test = test
        self.tenant = tenant
        self.apiKey = apiKey
        hub = NotificationHub(conninfo: test.conninfo, logger: quietLogger)
        hubGroup = ServiceGroup(services: [HubRunner(hub: hub)], logger: quietLogger)
        hubTask = Task { [hubGroup] in try await hubGroup.run() }
    }

    /// Runs `body` with a fresh harness whose service is started with `configure`d settings,
    /// and tears everything down afterwards.
    static func run<T: Sendable>(
        start: Bool = true,
        configure: (inout WebhookConfiguration) -> Void = { _ in },
        _ body: (WebhookHarness) async throws -> T
    ) async throws -> T {
        let test = try await TestDatabase.make(poolSize: 8)
        let (tenant, apiKey) = try await test.database.tenants.create(name: "hooks", quotas: TenantQuotas())
        let harness = WebhookHarness(test: test, tenant: tenant, apiKey: apiKey)
        do {
            if start { try await harness.start(configure) }
            let result = try await body(harness)
            await harness.close()
            return result
        } catch {
            await harness.close()
            throw error
        }
    }

    /// Starts a webhook service (another "instance" if one already runs).
    @discardableResult
    func start(_ configure: (inout WebhookConfiguration) -> Void = { _ in }) async throws -> WebhookService {
        var configuration = Self.testConfiguration()
        configure(&configuration)
        let service = try WebhookService(
            configuration: configuration, database: database,
            eventCursors: EventCursors(key: try await database.settings.eventCursorKey()), hub: hub, logger: quietLogger
        )
        let group = ServiceGroup(services: [service], logger: quietLogger)
        let task = Task { try await group.run() }
        running.withLock { $0 = (group, task, service) }
        return service
    }

    /// Starts a second instance's service (stopped with the harness at the latest).
    func startAnother(instanceID: String) async throws -> Instance {
        var configuration = Self.testConfiguration(instanceID: instanceID)
        configuration.instanceID = instanceID
        let service = try WebhookService(
            configuration: configuration, database: database,
            eventCursors: EventCursors(key: try await database.settings.eventCursorKey()), hub: hub, logger: quietLogger
        )
        let group = ServiceGroup(services: [service], logger: quietLogger)
        let instance = Instance(group: group, task: Task { try await group.run() })
        others.withLock { $0.append(instance) }
        return instance
    }

    /// The running service, as the engine would hold it.
    var service: WebhookService? { running.withLock { $0?.service } }

    /// Stops the service gracefully, as SIGTERM does.
    func stop() async {
        guard let (group, task, _) = running.withLock({ state in defer { state = nil }; return state }) else { return }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    private func close() async {
        await stop()
        for instance in others.withLock({ $0 }) { await instance.stop() }
        await hubGroup.triggerGracefulShutdown()
        _ = try? await hubTask.value
        await test.close()
    }

    // MARK: Arranging

    /// A session, with a delegate when `delegateURL` is given (secret generated here, returned).
    func makeSession(
        kind: SessionKind = .default, identifier: String? = nil, delegateURL: String? = nil, events: Set<EventType>? = nil,
        tenantID: String? = nil
    ) async throws -> (session: SessionRecord, secret: String?) {
        let secret = delegateURL.map { _ in Self.newSecret() }
        let configuration = SessionConfiguration(kind: kind, identifier: kind == .background ? (identifier ?? "bg-\(UInt32.random(in: 0...UInt32.max))") : nil)
        let delegate = delegateURL.map { DelegateSpec(url: $0, secret: secret, events: events) }
        let session = try await database.sessions.create(
            tenantID: tenantID ?? tenant.id, SessionCreation(configuration: configuration, delegate: delegate)
        ).session
        return (session, secret)
    }

    /// A suspended download task, with its own delegate when `delegateURL` is given.
    func makeTask(
        in session: SessionRecord, delegateURL: String? = nil, secret: String? = nil, events: Set<EventType>? = nil
    ) async throws -> TaskRecord {
        let request = TransferRequest(url: "https://origin.example/file.bin")
        var creation = TaskCreation(kind: .download, request: request)
        creation.delegate = delegateURL.map { DelegateSpec(url: $0, secret: secret ?? Self.newSecret(), events: events) }
        return try await database.tasks.create(
            tenantID: session.tenantID, sessionID: session.id, creation, request: request, host: "origin.example", origin: TaskStore.Origin()
        ).task
    }

    static func newSecret() -> String {
        var random = SystemRandomNumberGenerator()
        return WebhookSecret.generate(using: &random)
    }

    /// Appends a task event in its own transaction, as the engine does; returns the event id.
    @discardableResult
    func emit(_ type: EventType, task: TaskRecord, data: [String: JSONValue] = [:]) async throws -> String {
        try await pool.withTransaction { connection in
            _ = try connection.query("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE", [task.id])
            let ref = EventWriter.TaskRef(tenantID: task.tenantID, sessionID: task.sessionID, taskID: task.id)
            var batch = EventBatch()
            let id = batch.append(type, for: ref, data: data)
            try batch.flush(on: connection)
            return id
        }
    }

    /// Appends one of the session's own events in its own transaction, as an invalidation does.
    func emitSessionEvent(_ type: EventType, session: SessionRecord, data: [String: JSONValue] = [:]) async throws {
        try await pool.withTransaction { connection in
            _ = try EventWriter.appendSessionEvent(type, tenantID: session.tenantID, sessionID: session.id, data: data, on: connection)
        }
    }

    // MARK: Reading

    func deliveries(ofTask taskID: String) async throws -> [WebhookDeliveryRecord] {
        try await database.webhooks.deliveries(tenantID: tenant.id, filter: .init(taskID: taskID), limit: 1000, after: nil).items
    }

    func value<T: PostgresDecodable & Sendable>(_ sql: String, _ parameters: [any PostgresBindable] = [], as type: T.Type) async throws -> T {
        try await pool.withConnection { connection in
            try connection.query(sql, parameters)[0].decode(0, as: T.self)
        }
    }

    /// Polls the database until `condition` holds or `timeout` passes; returns whether it held.
    @discardableResult
    func eventually(timeout: Duration = .seconds(15), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(25))
        }
        return true
    }
}

/// The hub as a service.
private struct HubRunner: Service {
    let hub: NotificationHub

    func run() async throws {
        await cancelWhenGracefulShutdown { await hub.run() }
    }
}

extension WebhookLedger {
    /// Moves the fan-out past every committed event, for tests that drive the ledger without
    /// the webhook service.
    func fanOutEverything() async throws {
        var horizon = EventHorizon()
        repeat {
            horizon = try await advance(horizon)
        } while horizon.isWaiting
        _ = try await fanOut(upTo: horizon.safePosition, limit: 1000, decisionGrace: .seconds(30))
    }
}
