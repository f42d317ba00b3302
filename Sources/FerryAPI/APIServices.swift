import Curl
import FerryCore
import FerryStore
import Logging

/// What the API's handlers need from the rest of the instance.
public struct APIServices: Sendable {
    public var database: FerryDatabase
    public var resumeData: ResumeDataIssuer
    /// What each tenant sees of events' positions in the log.
    public var eventCursors: EventCursors
    public var hub: NotificationHub
    public var files: TenantFiles
    /// Whether this instance can serve: database reachable, schema current, workers running.
    public var readiness: @Sendable () async -> Readiness
    public var urlChecker: CurlURLChecker
    /// The Prometheus text of `/metrics`, when the process collects metrics.
    public var metricsExposition: (@Sendable () -> [UInt8])?
    /// The open `GET /v1/events/stream` responses: their per-tenant bound and shared horizon.
    public var eventStreams: EventStreams
    /// The data folder's free space and reserve, for `/readyz` and `/metrics`.
    public var diskSpace: DiskSpace?

    public init(
        database: FerryDatabase, resumeData: ResumeDataIssuer, eventCursors: EventCursors, hub: NotificationHub, files: TenantFiles,
        readiness: @escaping @Sendable () async -> Readiness,
        metricsExposition: (@Sendable () -> [UInt8])? = nil,
        maximumEventStreamsPerTenant: Int = EventStreams.defaultMaximumPerTenant,
        eventStreamAccessCheckInterval: Duration = .seconds(15)
    ) {
        self.eventStreams = EventStreams(
            events: database.events, maximumPerTenant: maximumEventStreamsPerTenant, accessCheckInterval: eventStreamAccessCheckInterval
        )
        self.metricsExposition = metricsExposition
        self.database = database
        self.resumeData = resumeData
        self.eventCursors = eventCursors
        self.hub = hub
        self.files = files
        self.readiness = readiness
        self.urlChecker = CurlURLChecker()
    }
}

/// `/readyz`'s answer.
public struct Readiness: Sendable, Encodable {
    public var isReady: Bool { databaseReachable && migrationsApplied && workersRunning }
    public var databaseReachable: Bool
    public var migrationsApplied: Bool
    public var workersRunning: Bool
    /// The data folder's disk. Below the reserve the instance stays ready (files can still be
    /// read and deleted, which is how space comes back) but downloads stop at the reserve.
    public var disk: DiskReadiness?

    public init(databaseReachable: Bool, migrationsApplied: Bool, workersRunning: Bool) {
        self.databaseReachable = databaseReachable
        self.migrationsApplied = migrationsApplied
        self.workersRunning = workersRunning
    }
}

/// `/readyz`'s view of the data folder's disk. The figures only for the operator: free space
/// falls as every tenant downloads.
public struct DiskReadiness: Sendable, Encodable {
    public var freeBytes: Int64
    public var reserveBytes: Int64
    public var isBelowReserve: Bool { freeBytes < reserveBytes }
    var showsFigures = true

    public init(freeBytes: Int64, reserveBytes: Int64) {
        self.freeBytes = freeBytes
        self.reserveBytes = reserveBytes
    }

    /// Whether it is below the reserve, without how much space there is.
    static func withoutFigures(_ disk: DiskReadiness) -> DiskReadiness {
        var disk = disk
        disk.showsFigures = false
        return disk
    }

    enum CodingKeys: String, CodingKey { case freeBytes, reserveBytes, isBelowReserve }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if showsFigures {
            try container.encode(freeBytes, forKey: .freeBytes)
            try container.encode(reserveBytes, forKey: .reserveBytes)
        }
        try container.encode(isBelowReserve, forKey: .isBelowReserve)
    }
}

/// URLs are checked with libcurl's own parser, so what Ferry validates is what curl fetches.
public struct CurlURLChecker: URLSyntaxChecker {
    public init() {}

    public func check(_ text: String, field: String) throws -> CheckedURL {
        do {
            let url = try CurlURL(httpURL: text, maximumLength: Self.maximumURLLength)
            return CheckedURL(url: url.url, scheme: url.scheme, host: url.host)
        } catch {
            throw ValidationError(field: field, message: error.message)
        }
    }
}

extension HTTPURLProblem {
    /// The sentence a tenant reads after the field's name.
    public var message: String {
        switch self {
        case .tooLong(let maximum): "must be at most \(maximum) bytes long."
        case .spacesOrControlCharacters: "must not contain spaces or control characters (percent-encode them)."
        case .notAURL: "is not a valid absolute URL."
        case .scheme(let scheme): "must be an http or https URL, not \(scheme.isEmpty ? "a relative URL" : "\"\(scheme)\"")."
        case .noHost: "must name a host."
        case .host: "must name a host of at most 253 bytes, labels of at most 63, in ASCII (an international name in its xn-- form)."
        case .port: "must have a port from 1 to 65535."
        case .credentials: "must not hold %00 (NUL) in its user name or password."
        }
    }
}
