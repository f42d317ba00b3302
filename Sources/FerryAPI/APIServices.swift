import Curl
import FerryCore
import FerryStore
import Logging

/// What the API's handlers need from the rest of the instance.
public struct APIServices: Sendable {
    public var database: FerryDatabase
    public var resumeData: ResumeDataIssuer
    public var hub: NotificationHub
    public var files: TenantFiles
    /// Whether this instance can serve: database reachable, schema current, workers running.
    public var readiness: @Sendable () async -> Readiness
    public var urlChecker: CurlURLChecker

    public init(
        database: FerryDatabase, resumeData: ResumeDataIssuer, hub: NotificationHub, files: TenantFiles,
        readiness: @escaping @Sendable () async -> Readiness
    ) {
        self.database = database
        self.resumeData = resumeData
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

    public init(databaseReachable: Bool, migrationsApplied: Bool, workersRunning: Bool) {
        self.databaseReachable = databaseReachable
        self.migrationsApplied = migrationsApplied
        self.workersRunning = workersRunning
    }
}

/// URLs are checked with libcurl's own parser, so what Ferry validates is what curl fetches.
public struct CurlURLChecker: URLSyntaxChecker {
    public init() {}

    public func check(_ text: String, field: String) throws -> CheckedURL {
        guard text.utf8.count <= Self.maximumURLLength else {
            throw ValidationError(field: field, message: "must be at most \(Self.maximumURLLength) bytes long.")
        }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw ValidationError(field: field, message: "must not contain spaces or control characters (percent-encode them).")
        }
        let parsed: CurlURL
        do {
            parsed = try CurlURL(parsing: text)
        } catch {
            throw ValidationError(field: field, message: "is not a valid absolute URL.")
        }
        guard parsed.scheme == "http" || parsed.scheme == "https" else {
            throw ValidationError(field: field, message: "must be an http or https URL, not \(parsed.scheme.isEmpty ? "a relative URL" : "\"\(parsed.scheme)\"").")
        }
        guard !parsed.host.isEmpty else {
            throw ValidationError(field: field, message: "must name a host.")
        }
        return CheckedURL(url: parsed.url, scheme: parsed.scheme, host: parsed.host)
    }
}
