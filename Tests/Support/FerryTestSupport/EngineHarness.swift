import FerryCore
import FerryEngine
import FerryStore
import FerryWebhooks
import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// A running Ferry instance without its HTTP API, for tests: a migrated database, the
/// notification hub and a transfer engine in a service group, a data folder, and a tenant and
/// session to create tasks in.
public final class EngineHarness: Sendable {
    public let database: TestDatabase
    public let dataDirectory: String
    public let tenant: TenantRecord
    public let resumeData: ResumeDataIssuer
    public let hub: NotificationHub
    /// The running engine, for what only it knows (its memory, worker wake-ups).
    public let engine: TransferEngine
    let group: ServiceGroup
    let running: Task<Void, any Error>

    /// Starts an engine; `configure` adjusts the test defaults (short heartbeats and leases,
    /// loopback allowed). Without `dataDirectory`, a new scratch folder; one passed in (a restart
    /// on the folder of an earlier instance) is left to the caller.
    public init(
        database: TestDatabase? = nil,
        instanceID: String = "test-instance",
        dataDirectory: String? = nil,
        tenant: TenantRecord? = nil,
        webhooks: WebhookConfiguration? = nil,
        configure: (inout EngineConfiguration) -> Void = { _ in }
    ) async throws {
        let database = if let database { database } else { try await TestDatabase.make(poolSize: 6) }
        self.database = database
        self.dataDirectory = if let dataDirectory { dataDirectory } else { try TestScratch.folder(named: "engine-data") }
        var configuration = EngineConfiguration(
            instanceID: instanceID,
            workerCount: 2,
            dataDirectory: self.dataDirectory,
            addressPolicy: AddressPolicy(allowedNetworks: [try CIDRBlock("127.0.0.0/8"), try CIDRBlock("::1/128")]),
            heartbeatInterval: .milliseconds(200),
            // Long enough that a heavily loaded test machine does not miss renewals.
            leaseDuration: .seconds(10),
            reaperInterval: .milliseconds(500),
            // A bound, not a wait: hand-back ends as soon as every transfer is written. With the
            // whole suite running on two cores, 5 s was once not enough to write a -1005.
            shutdownGracePeriod: .seconds(20)
        )
        configure(&configuration)
        resumeData = ResumeDataIssuer(signingKey: try await database.database.settings.resumeDataSigningKey())
        let hub = NotificationHub(conninfo: database.conninfo, logger: quietLogger)
        self.hub = hub
        // With a webhook configuration, events are delivered and decisions asked of receivers.
        let eventCursors = EventCursors(key: try await database.database.settings.eventCursorKey())
        let webhookService = try webhooks.map {
            try WebhookService(configuration: $0, database: database.database, eventCursors: eventCursors, hub: hub, logger: quietLogger)
        }
        let engine = TransferEngine(
            configuration: configuration, database: database.database, hub: hub, resumeData: resumeData,
            gateway: webhookService, logger: quietLogger
        )
        self.engine = engine
        let services: [any Service] = [HubService(hub: hub)] + (webhookService.map { [$0] } ?? []) + [engine]
        group = ServiceGroup(services: services, logger: quietLogger)
        running = Task { [group] in try await group.run() }
        self.tenant = if let tenant { tenant } else { try await database.database.tenants.create(name: "test tenant", quotas: TenantQuotas()).tenant }
    }

    /// Hands back every transfer and stops, as SIGTERM does.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }

    /// Cancels the instance, as a service group does when another of its services fails, and
    /// waits until it has ended.
    public func cancel() async {
        running.cancel()
        _ = try? await running.value
    }

    /// Runs `body` with a fresh instance, stopping it afterwards whatever happens.
    public static func run<T: Sendable>(
        instanceID: String = "test-instance",
        webhooks: WebhookConfiguration? = nil,
        configure: (inout EngineConfiguration) -> Void = { _ in },
        _ body: (EngineHarness) async throws -> T
    ) async throws -> T {
        let ferry = try await EngineHarness(instanceID: instanceID, webhooks: webhooks, configure: configure)
        // The data folder was made for this instance alone: it goes once the instance has stopped.
        defer { try? FileManager.default.removeItem(atPath: ferry.dataDirectory) }
        do {
            let result = try await body(ferry)
            await ferry.stop()
            await ferry.database.close()
            return result
        } catch {
            await ferry.stop()
            await ferry.database.close()
            throw error
        }
    }

    public var tasks: TaskStore { database.database.tasks }

    /// Stores ada's credential in `session` for the loopback origin on `port` (any realm unless
    /// one is named), as `PUT /v1/sessions/{id}/credentials` does.
    public func storeCredential(
        in session: SessionRecord, port: Int, realm: String? = nil, password: String = "lovelace"
    ) async throws {
        _ = try await database.database.credentials.set(
            tenantID: tenant.id, sessionID: session.id,
            space: ProtectionSpace(host: "127.0.0.1", port: port, protocol: "http", realm: realm, authenticationMethod: .default),
            user: "ada", password: password
        )
    }

    public func makeSession(_ configuration: SessionConfiguration = SessionConfiguration(kind: .default)) async throws -> SessionRecord {
        try await database.database.sessions.create(tenantID: tenant.id, SessionCreation(configuration: configuration)).session
    }

    /// Creates a task that starts at once.
    public func startTask(
        in session: SessionRecord, kind: TaskKind, url: String, method: String = "GET",
        headers: [String: String] = [:], uploadBody: [UInt8]? = nil, checkpoint: TransferCheckpoint? = nil,
        adoptsPartialFileOf: String? = nil
    ) async throws -> TaskRecord {
        var request = TransferRequest(url: url, httpMethod: method, allHTTPHeaderFields: headers)
        var creation = TaskCreation(kind: kind, request: request)
        if let uploadBody {
            creation.uploadBody = .inline(uploadBody)
            request.httpBodyLength = Int64(uploadBody.count)
            creation.request = request
        }
        creation.startsImmediately = true
        let host = URL(string: checkpoint?.url ?? url)?.host ?? url
        return try await tasks.create(
            tenantID: tenant.id, sessionID: session.id, creation, request: request, host: host,
            origin: TaskStore.Origin(checkpoint: checkpoint, adoptsPartialFileOf: adoptsPartialFileOf)
        ).task
    }

    /// Waits until the task completes (or `timeout` passes) and returns it.
    public func completion(of taskID: String, timeout: Duration = .seconds(20)) async throws -> TaskRecord {
        let deadline = ContinuousClock.now + timeout
        while true {
            let task = try await tasks.find(tenantID: tenant.id, id: taskID)
            if task.state == .completed || ContinuousClock.now >= deadline { return task }
            await hub.waitForCompletion(of: taskID, timeout: .milliseconds(250))
        }
    }

    /// Runs a statement on the instance's database.
    public func execute(_ sql: String, _ parameters: [any PostgresBindable] = []) async throws {
        _ = try await database.database.pool.withConnection { try $0.execute(sql, parameters) }
    }

    /// The first column of the first row `sql` answers.
    public func value<T: PostgresDecodable & Sendable>(_ sql: String, _ parameters: [any PostgresBindable] = [], as type: T.Type) async throws -> T {
        try await database.database.pool.withConnection { try $0.query(sql, parameters).firstRow().decode(0, as: T.self) }
    }

    /// Waits until `condition` holds for the task (polling), or `timeout` passes.
    public func task(_ taskID: String, timeout: Duration = .seconds(10), until condition: (TaskRecord) -> Bool) async throws -> TaskRecord {
        let deadline = ContinuousClock.now + timeout
        while true {
            let task = try await tasks.find(tenantID: tenant.id, id: taskID)
            if condition(task) || ContinuousClock.now >= deadline { return task }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The finished download's bytes.
    public func downloadedFile(of taskID: String) throws -> [UInt8] {
        let path = try TenantFiles(dataDirectory: dataDirectory).path(.downloads, tenantID: tenant.id, name: TenantFiles.downloadName(taskID: taskID))
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    public func responseBody(of taskID: String) async throws -> [UInt8]? {
        try await tasks.responseBody(tenantID: tenant.id, taskID: taskID).body
    }

    /// The task's event types in sequence order.
    public func eventTypes(of taskID: String) async throws -> [String] {
        try await database.database.pool.withConnection { connection in
            try connection.query("SELECT type FROM events WHERE task_id = $1 ORDER BY sequence", [taskID]).map { try $0.decode(0, as: String.self) }
        }
    }

    /// The `data` of the task's events of one type, in sequence order.
    public func eventData(of taskID: String, type: String) async throws -> [JSONValue] {
        let texts = try await database.database.pool.withConnection { connection in
            try connection.query(
                "SELECT data::text FROM events WHERE task_id = $1 AND type = $2 ORDER BY sequence", [taskID, type]
            ).map { try $0.decode(0, as: String.self) }
        }
        return try texts.map { try JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
    }
}

/// The hub as a service of the test group.
struct HubService: Service {
    let hub: NotificationHub

    func run() async throws {
        await cancelWhenGracefulShutdown { await hub.run() }
    }
}
