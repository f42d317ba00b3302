import FerryTestSupport
import Foundation
import Postgres
import Synchronization

/// What one end-to-end test runs against: a fresh migrated database (or none, for the
/// embedded default), a data folder shared by the test's Ferry processes, and every process
/// started, so all of them are killed and the folders removed however the test ends.
final class Testbed: Sendable {
    /// nil for the embedded default: Ferry creates its own cluster under `dataDirectory`.
    let database: TestDatabase?
    let root: String
    let dataDirectory: String
    let adminToken = "e2e-operator-token"
    private let instances = Mutex<[FerryInstance]>([])
    private let ports = Mutex<[String: Int]>([:])

    private init(database: TestDatabase?, root: String) throws {
        self.database = database
        self.root = root
        dataDirectory = (root as NSString).appendingPathComponent("data")
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        // The embedded PostgreSQL runs as an unprivileged user who must reach its folder.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
    }

    /// Runs `body` with a testbed, tearing it down afterwards whatever happens.
    static func run<T: Sendable>(embedded: Bool = false, _ body: (Testbed) async throws -> T) async throws -> T {
        let database = embedded ? nil : try await TestDatabase.make(poolSize: 2)
        let root = try keepsFolders
            ? FileManager.default.temporaryDirectory.appendingPathComponent("ferry-e2e-\(UInt64.random(in: 0...UInt64.max))").path
            : TestScratch.folder(named: "e2e")
        let testbed = try Testbed(database: database, root: root)
        do {
            let result = try await body(testbed)
            await testbed.tearDown()
            return result
        } catch {
            await testbed.tearDown()
            throw error
        }
    }

    /// Starts `ferry serve` named `instanceID` and waits until it is ready. The same name gets
    /// the same port again, so a restarted instance is at the same address.
    @discardableResult
    func start(
        _ instanceID: String, readinessTimeout: Duration = .seconds(30), configure: (inout FerryInstance.Configuration) -> Void = { _ in }
    ) async throws -> FerryInstance {
        let port = try ports.withLock { ports in
            if let port = ports[instanceID] { return port }
            let port = try FreePort.pick()
            ports[instanceID] = port
            return port
        }
        var configuration = FerryInstance.Configuration(
            databaseURL: database?.conninfo, dataDirectory: dataDirectory, port: port, instanceID: instanceID,
            adminToken: adminToken, logDirectory: root
        )
        configure(&configuration)
        let instance = try FerryInstance(configuration)
        instances.withLock { $0.append(instance) }
        try await instance.waitUntilReady(timeout: readinessTimeout)
        return instance
    }

    /// A client of `instance` with the operator token.
    func operatorClient(_ instance: FerryInstance) -> FerryClient {
        FerryClient(baseURL: instance.baseURL, token: adminToken)
    }

    /// Creates a tenant through `instance` and returns a client holding its API key.
    func makeTenant(on instance: FerryInstance, name: String = "acme") async throws -> (tenant: TenantAnswer, client: FerryClient) {
        let tenant = try await operatorClient(instance).createTenant(name: name)
        guard let key = tenant.apiKey else { throw HarnessError("the tenant was created without an API key") }
        return (tenant, FerryClient(baseURL: instance.baseURL, token: key))
    }

    /// The last lines of every instance's log, for failure messages.
    func logs() -> String {
        instances.withLock { $0 }.map { $0.logTail(lines: 30) }.joined(separator: "\n")
    }

    private func tearDown() async {
        let started = instances.withLock { $0 }
        for instance in started { instance.killNow() }
        for instance in started {
            _ = try? await eventually(timeout: .seconds(5), every: .milliseconds(20)) { instance.isRunning ? nil : true }
        }
        if database == nil {
            // A killed owner leaves the embedded cluster running: stop it before removing its files.
            let cluster = PostgresCluster(
                configuration: PostgresClusterConfiguration(dataDirectory: (dataDirectory as NSString).appendingPathComponent("postgres")),
                logger: quietLogger
            )
            if cluster.isRunning { try? cluster.stopImmediately() }
        }
        await database?.close()
        if !Self.keepsFolders {
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    /// FERRY_E2E_KEEP keeps every testbed's folders for a look after the run: outside the
    /// process's scratch root, which goes when the process exits.
    private static var keepsFolders: Bool { ProcessInfo.processInfo.environment["FERRY_E2E_KEEP"] != nil }
}
