import ArgumentParser
import FerryAPI
import FerryCore
import FerryEngine
import FerryStore
import FerryWebhooks
import Foundation
import Hummingbird
import Logging
import Postgres
import Prometheus
import ServiceLifecycle

/// `ferry serve`: the API, the transfer engine and the notification listener, as services of
/// one group that SIGTERM and SIGINT shut down gracefully.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run Ferry.")

    @OptionGroup var options: FerrySettingsOptions

    func run() async throws {
        let settings = try options.resolve()
        LogSetup.bootstrap(settings)
        let metrics = MetricsSetup.bootstrap()
        var logger = Logger(label: "ferry")
        logger[metadataKey: "instance"] = .string(settings.instanceID)

        let opened = try await DatabaseLauncher(settings: settings, role: .server, logger: logger)
            .open(poolSize: settings.databaseConnections, applicationName: "ferry \(settings.instanceID)")
        do {
            try await serve(settings: settings, opened: opened, metrics: metrics, logger: logger)
        } catch {
            await opened.close()
            throw error
        }
        await opened.close()
    }

    private func serve(settings: FerrySettings, opened: DatabaseLauncher.Opened, metrics: PrometheusCollectorRegistry, logger: Logger) async throws {
        let database = opened.database
        if let generated = try await database.settings.ensureAdminToken(configured: settings.adminToken) {
            // Shown once, on the first start; only its hash is stored.
            // Written straight to the descriptor: stdout may be a buffered file, and this must not be lost.
            FileHandle.standardOutput.write(Data("""

                Ferry generated the operator token (shown once; set FERRY_ADMIN_TOKEN to choose your own):

                    \(generated)


                """.utf8))
        }
        let resumeData = ResumeDataIssuer(signingKey: try await database.settings.resumeDataSigningKey())
        let eventCursors = EventCursors(key: try await database.settings.eventCursorKey())
        let hub = NotificationHub(conninfo: opened.conninfo, logger: logger)
        let webhooks = try WebhookService(
            configuration: WebhookConfiguration(
                instanceID: settings.instanceID, addressPolicy: AddressPolicy(allowedNetworks: settings.allowedNetworks),
                requestTimeout: settings.webhookRequestTimeout, connectTimeout: settings.webhookRequestTimeout,
                leaseDuration: settings.webhookLease
            ),
            database: database, eventCursors: eventCursors, hub: hub, logger: logger
        )
        let openFiles = OpenFileLimit.raise()
        let diskSpace = DiskSpace(path: settings.dataDirectory, reserveBytes: settings.diskReserveBytes)
        var engineConfiguration = EngineConfiguration(
            instanceID: settings.instanceID,
            workerCount: settings.workers,
            dataDirectory: settings.dataDirectory,
            addressPolicy: AddressPolicy(allowedNetworks: settings.allowedNetworks),
            transfersPerWorker: OpenFileLimit.transfersPerWorker(
                openFiles: openFiles, workers: settings.workers, preferred: EngineConfiguration.defaultTransfersPerWorker
            ),
            maximumDataBytes: settings.maximumDataTaskBytes,
            version: FerryVersion.current
        )
        engineConfiguration.diskSpace = diskSpace
        engineConfiguration.memoryBudgetBytes = settings.memoryBudgetBytes
        logger.info("open files", metadata: ["limit": "\(openFiles)", "transfers at once": "\(engineConfiguration.capacity)"])
        let engine = TransferEngine(
            configuration: engineConfiguration,
            database: database, hub: hub, resumeData: resumeData, gateway: webhooks, logger: logger
        )
        var services = APIServices(
            database: database, resumeData: resumeData, eventCursors: eventCursors, hub: hub,
            files: TenantFiles(dataDirectory: settings.dataDirectory),
            readiness: { [latestMigration = (try? Migrator(logger: logger))?.latestVersion] in
                await Self.readiness(database: database, engine: engine, latestMigration: latestMigration)
            },
            metricsExposition: { metrics.emitToBuffer() },
            maximumEventStreamsPerTenant: settings.maximumEventStreamsPerTenant
        )
        services.diskSpace = diskSpace
        let application = Application(
            router: makeRouter(services: services),
            server: APIServer.http1(idleTimeout: settings.idleTimeout),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "Ferry"),
            onServerRunning: { channel in
                logger.info("Ferry is listening", metadata: ["address": "\(channel.localAddress?.description ?? "?")"])
            },
            logger: logger
        )
        // Shut down in reverse: stop waiting out database outages, stop taking requests, then
        // hand back transfers (decisions still answered), then finish the webhook requests in
        // flight, then stop listening.
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: AdminTokenRefresher(settings: database.settings)),
                    .init(service: NotificationHubService(hub: hub)), .init(service: webhooks),
                    .init(service: engine), .init(service: application),
                    .init(service: DatabaseStoppingService(pool: database.pool), successTerminationBehavior: .ignore),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }

    /// `latestMigration`: the bundled migrations' latest version, read from their files once at
    /// start, not by every probe (file reads on the cooperative pool).
    static func readiness(database: FerryDatabase, engine: TransferEngine, latestMigration: Int?) async -> Readiness {
        let version = try? await Migrator.appliedVersion(database.pool)
        return Readiness(
            databaseReachable: version != nil,
            migrationsApplied: version != nil && version == latestMigration,
            workersRunning: engine.isRunning
        )
    }
}

/// The first service told that the process stops (the last of the group): from then on a
/// database call no longer waits out an absent server (`PostgresPool.beginStopping`), so that
/// the services stopped after it finish in seconds whether PostgreSQL is there or not.
struct DatabaseStoppingService: Service {
    let pool: PostgresPool

    func run() async throws {
        // Cancelled instead (the group failed): stopping all the same.
        try? await gracefulShutdown()
        pool.beginStopping()
    }
}

/// The notification listener as a service of the group.
struct NotificationHubService: Service {
    let hub: NotificationHub

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await hub.run()
        }
    }
}
