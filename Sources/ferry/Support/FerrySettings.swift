import ArgumentParser
import FerryAPI
import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// The settings of DESIGN §7: environment variables, overridden by flags of the same meaning.
struct FerrySettingsOptions: ParsableArguments {
    @Option(help: "Where the API listens (FERRY_HOST, default 127.0.0.1).")
    var host: String?

    @Option(help: "The API port (FERRY_PORT, default 8080).")
    var port: Int?

    @Option(help: "Downloads, blobs, partial files and the embedded PostgreSQL (FERRY_DATA_DIR, default ./.ferry).")
    var dataDir: String?

    @Option(help: "An external PostgreSQL as a libpq URI (DATABASE_URL); without it Ferry runs its own.")
    var databaseURL: String?

    @Option(help: "Transfer worker threads (FERRY_WORKERS, default: the number of cores).")
    var workers: Int?

    @Option(help: "PostgreSQL connections of this instance (FERRY_DATABASE_CONNECTIONS, default 4 per core, 8 to 64).")
    var databaseConnections: Int?

    @Option(help: "CIDRs exempt from the address policy, comma-separated (FERRY_ALLOW_NETWORKS).")
    var allowNetworks: String?

    @Option(help: "This instance's name in leases and logs (FERRY_INSTANCE_ID, default host-pid).")
    var instanceID: String?

    @Option(help: "Log format: text or json (FERRY_LOG_FORMAT, default text).")
    var logFormat: String?

    func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> FerrySettings {
        func value(_ flag: String?, _ name: String) -> String? {
            if let flag { return flag }
            guard let text = environment[name], !text.isEmpty else { return nil }
            return text
        }
        let portText = port.map(String.init) ?? value(nil, "FERRY_PORT") ?? "8080"
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw ValidationError("FERRY_PORT must be a port number, not \(portText).")
        }
        /// A count from its flag or variable, within `range`; nil when neither is set.
        func count(_ flag: Int?, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
            guard let text = flag.map(String.init) ?? value(nil, name) else { return nil }
            guard let count = Int(text), range.contains(count) else {
                throw ValidationError("\(name) must be \(range.lowerBound) to \(range.upperBound), not \(text).")
            }
            return count
        }
        let workers = try count(workers, "FERRY_WORKERS", in: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        // Each connection is a server process and a thread here. More than the cores can keep
        // busy only adds switching, and every connection plans each statement afresh for its
        // first executions: 16 on 2 cores made the small-downloads benchmark a third slower than 8.
        let databaseConnections = try count(databaseConnections, "FERRY_DATABASE_CONNECTIONS", in: 2...512)
            ?? min(64, max(8, 4 * ProcessInfo.processInfo.activeProcessorCount))
        let allowList: [CIDRBlock]
        do {
            allowList = try AddressPolicy.parseAllowList(value(allowNetworks, "FERRY_ALLOW_NETWORKS") ?? "")
        } catch {
            throw ValidationError("FERRY_ALLOW_NETWORKS: \(error)")
        }
        let format = value(logFormat, "FERRY_LOG_FORMAT") ?? "text"
        guard format == "text" || format == "json" else { throw ValidationError("FERRY_LOG_FORMAT must be text or json, not \(format).") }
        let levelName = value(nil, "FERRY_LOG_LEVEL") ?? "info"
        guard let logLevel = Logger.Level(rawValue: levelName) else {
            throw ValidationError("FERRY_LOG_LEVEL must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), not \(levelName).")
        }
        // Such a token can never be presented (the request's is trimmed, and a header holds no
        // line break): every operator call would answer 401 without saying why.
        let adminToken = environment["FERRY_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        if let adminToken, adminToken.trimmingCharacters(in: .whitespaces) != adminToken || adminToken.contains(where: \.isNewline) {
            throw ValidationError("FERRY_ADMIN_TOKEN starts or ends with white space, or holds a line break (a stray newline from a file?): remove it.")
        }
        let dataDirectory = URL(fileURLWithPath: value(dataDir, "FERRY_DATA_DIR") ?? ".ferry").standardizedFileURL.path
        return FerrySettings(
            host: value(host, "FERRY_HOST") ?? "127.0.0.1",
            port: port,
            dataDirectory: dataDirectory,
            databaseURL: value(databaseURL, "DATABASE_URL"),
            adminToken: adminToken,
            workers: workers,
            databaseConnections: databaseConnections,
            allowedNetworks: allowList,
            instanceID: value(instanceID, "FERRY_INSTANCE_ID") ?? "\(ProcessInfo.processInfo.hostName)-\(getpid())",
            logsAsJSON: format == "json",
            logLevel: logLevel,
            maximumDataTaskBytes: try count(nil, "FERRY_MAX_DATA_TASK_BYTES", in: 1...(1 << 40)) ?? 16 * 1024 * 1024,
            idleTimeout: try count(nil, "FERRY_IDLE_TIMEOUT", in: 1...3600).map { Duration.seconds($0) } ?? APIServer.defaultIdleTimeout,
            maximumEventStreamsPerTenant: try count(nil, "FERRY_MAX_EVENT_STREAMS", in: 1...10_000) ?? EventStreams.defaultMaximumPerTenant,
            diskReserveBytes: try count(nil, "FERRY_DISK_RESERVE_BYTES", in: 0...(1 << 50)).map(Int64.init) ?? DiskSpace.defaultReserveBytes,
            memoryBudgetBytes: try count(nil, "FERRY_MEMORY_BUDGET_BYTES", in: (16 << 20)...(1 << 40)) ?? MemoryBudget.defaultCapacity,
            webhookLease: try count(nil, "FERRY_WEBHOOK_LEASE", in: 3...3600).map { Duration.seconds($0) } ?? FerrySettings.defaultWebhookLease
        )
    }
}

struct FerrySettings: Sendable {
    var host: String
    var port: Int
    var dataDirectory: String
    var databaseURL: String?
    var adminToken: String?
    var workers: Int
    var databaseConnections: Int
    var allowedNetworks: [CIDRBlock]
    var instanceID: String
    var logsAsJSON: Bool
    var logLevel: Logger.Level
    var maximumDataTaskBytes: Int
    /// How long an API connection may stay silent before it is closed.
    var idleTimeout: Duration
    /// Event streams one tenant may hold open on this instance.
    var maximumEventStreamsPerTenant: Int
    /// Free space downloads leave on the data folder's disk.
    var diskReserveBytes: Int64
    /// What transfers may hold in memory in all (data-task bodies, ephemeral URL caches).
    var memoryBudgetBytes: Int
    /// How long a webhook delivery being sent stays this instance's: after a crash, another
    /// instance sends it again once this has passed.
    var webhookLease: Duration

    static let defaultWebhookLease = Duration.seconds(30)

    /// A webhook request's timeout (connection included): at most 10 s, and a third of the
    /// lease, so that a delivery is answered or given up well before another instance may take
    /// it over and send it a second time.
    var webhookRequestTimeout: Duration {
        min(.seconds(10), webhookLease / 3)
    }
}
