import FerryAPI
import FerryCore
import FerryEngine
import FerryStore
import FerryTestSupport
import Foundation
import Testing
import Hummingbird
import HummingbirdTesting

/// Ferry's real router (`makeRouter(services:)`) over a real, freshly migrated PostgreSQL, with a
/// running `NotificationHub`, driven in-process through HummingbirdTesting's `.router` client.
///
/// `run` gives a database of its own; `runWithEngine` adds a transfer engine (`EngineHarness`) so
/// tasks really transfer. Either way the operator token is set, so tests make tenants through
/// `POST /admin/v1/tenants` as a client would.
struct APIHarness: Sendable {
    let database: FerryDatabase
    let services: APIServices
    let http: any TestClientProtocol
    let operatorToken: String

    /// A client that sends the operator token.
    var operatorClient: FerryClient { FerryClient(http: http, token: operatorToken) }

    /// A client that sends no credentials.
    var anonymousClient: FerryClient { FerryClient(http: http, token: nil) }

    /// Creates a tenant through the admin API and returns a client holding its API key.
    func makeTenant(name: String = "tenant") async throws -> FerryClient {
        let tenant = try await operatorClient.createTenant(["name": .string(name)])
        let apiKey = try #require(tenant.apiKey, "the creating answer shows the API key")
        return FerryClient(http: http, token: apiKey, tenantID: tenant.id)
    }

    /// Revokes every API key of `tenant` through the admin API.
    func revokeKeys(of tenant: FerryClient) async throws {
        let keys = try await operatorClient.call(.get, "/admin/v1/tenants/\(tenant.tenantID)/keys", expecting: .ok, as: ListReply<IdentifiedReply>.self)
        for key in keys.data {
            let reply = try await operatorClient.send(.delete, "/admin/v1/tenants/\(tenant.tenantID)/keys/\(key.id)")
            guard reply.status == .noContent else { throw UnexpectedReply(reply: reply, expectation: "204") }
        }
    }

    /// Every row the API could write, counted.
    func rowCounts() async throws -> RowCounts {
        try await RowCounts.read(database)
    }

    /// A harness of the suite's pool (`.sharedHarnesses`) for the duration of `body`, else a fresh one.
    static func run<T: Sendable>(_ body: @escaping @Sendable (APIHarness) async throws -> T) async throws -> T {
        if let pool = HarnessPool.current {
            return try await pool.borrow(body)
        }
        return try await FixtureGate.shared.withPermit { try await runFresh(body) }
    }

    /// A fresh database, a running hub and the router; no transfer engine. The database and the
    /// data folder are removed afterwards: there are hundreds of cases.
    static func runFresh<T: Sendable>(
        server: Server = .inProcess, diskSpace: DiskSpace? = nil, _ body: @escaping @Sendable (APIHarness) async throws -> T
    ) async throws -> T {
        let dataDirectory = try TestScratch.folder(named: "api-data")
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        let testDatabase = try await TestDatabase.make(poolSize: 3)
        let hub = NotificationHub(conninfo: testDatabase.conninfo, logger: quietLogger)
        let outcome: Result<T, any Error>
        do {
            var services = APIServices(
                database: testDatabase.database,
                resumeData: ResumeDataIssuer(signingKey: try await testDatabase.database.settings.resumeDataSigningKey()),
                eventCursors: EventCursors(key: try await testDatabase.database.settings.eventCursorKey()),
                hub: hub,
                files: TenantFiles(dataDirectory: dataDirectory),
                readiness: { Readiness(databaseReachable: true, migrationsApplied: true, workersRunning: false) }
            )
            services.diskSpace = diskSpace
            services.metricsExposition = { Array("ferry_test_series 1\n".utf8) }
            outcome = .success(try await withRunning(hub) { try await serve(services, server: server, body) })
        } catch {
            outcome = .failure(error)
        }
        let name = try? await DatabaseDropper.name(of: testDatabase)
        await testDatabase.close()
        if let name { await DatabaseDropper.drop(named: name) }
        return try outcome.get()
    }

    /// An `EngineHarness` (database, hub and transfer engine; loopback allowed) behind the router.
    static func runWithEngine<T: Sendable>(
        configure: (inout EngineConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (APIHarness, EngineHarness) async throws -> T
    ) async throws -> T {
        try await FixtureGate.shared.withPermit {
            let (outcome, name) = try await EngineHarness.run(configure: configure) { ferry in
                let name = try await DatabaseDropper.name(of: ferry.database)
                let services = APIServices(
                    database: ferry.database.database,
                    resumeData: ferry.resumeData,
                    eventCursors: EventCursors(key: try await ferry.database.database.settings.eventCursorKey()),
                    hub: ferry.hub,
                    files: TenantFiles(dataDirectory: ferry.dataDirectory),
                    readiness: { Readiness(databaseReachable: true, migrationsApplied: true, workersRunning: true) }
                )
                do {
                    return (Result<T, any Error>.success(try await serve(services) { api in try await body(api, ferry) }), name)
                } catch {
                    return (Result<T, any Error>.failure(error), name)
                }
            }
            await DatabaseDropper.drop(named: name)
            return try outcome.get()
        }
    }

    /// How the router is reached: in-process (no socket), or through a real HTTP server on a
    /// loopback port, as `ferry serve` runs it, for what only a socket shows.
    enum Server: Sendable {
        case inProcess
        case live(idleTimeout: Duration = APIServer.defaultIdleTimeout)
    }

    private static func serve<T: Sendable>(
        _ services: APIServices, server: Server = .inProcess, _ body: @escaping @Sendable (APIHarness) async throws -> T
    ) async throws -> T {
        var random = SystemRandomNumberGenerator()
        let operatorToken = AdminToken.generate(using: &random)
        _ = try await services.database.settings.ensureAdminToken(configured: operatorToken)
        let app: Application<RouterResponder<FerryRequestContext>>
        let testing: TestingSetup
        switch server {
        case .inProcess:
            app = Application(router: makeRouter(services: services), logger: quietLogger)
            testing = .router
        case .live(let idleTimeout):
            app = Application(
                router: makeRouter(services: services), server: APIServer.http1(idleTimeout: idleTimeout),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: quietLogger
            )
            testing = .live
        }
        return try await app.test(testing) { client in
            try await body(APIHarness(database: services.database, services: services, http: client, operatorToken: operatorToken))
        }
    }

    /// Runs `body` while the hub listens, as `ferry serve` runs it; cancelling stops it.
    private static func withRunning<T: Sendable>(_ hub: NotificationHub, _ body: () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            group.addTask { await hub.run() }
            do {
                let result = try await body()
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }
}
