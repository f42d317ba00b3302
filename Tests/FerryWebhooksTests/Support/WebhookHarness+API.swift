import FerryAPI
import FerryCore
import FerryStore
import FerryTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore

/// Ferry's router over the harness's database and hub.
extension WebhookHarness {
    /// The harness tenant's event cursors, as the API shows positions (`EventCursor`).
    func eventCursor() async throws -> EventCursor {
        EventCursors(key: try await database.settings.eventCursorKey()).forTenant(tenant.id)
    }

    func withAPI<T: Sendable>(
        live: Bool = false, eventStreamsPerTenant: Int = EventStreams.defaultMaximumPerTenant,
        eventStreamAccessCheckInterval: Duration = .seconds(15),
        _ body: @escaping @Sendable (APIClient) async throws -> T
    ) async throws -> T {
        let dataDirectory = try TestScratch.folder(named: "hooks-api")
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        let services = APIServices(
            database: database,
            resumeData: ResumeDataIssuer(signingKey: try await database.settings.resumeDataSigningKey()),
            eventCursors: EventCursors(key: try await database.settings.eventCursorKey()),
            hub: hub,
            files: TenantFiles(dataDirectory: dataDirectory),
            readiness: { Readiness(databaseReachable: true, migrationsApplied: true, workersRunning: true) },
            maximumEventStreamsPerTenant: eventStreamsPerTenant, eventStreamAccessCheckInterval: eventStreamAccessCheckInterval
        )
        let application = Application(
            router: makeRouter(services: services),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            logger: quietLogger
        )
        let apiKey = self.apiKey
        return try await application.test(live ? .live : .router) { client in
            try await body(APIClient(http: client, apiKey: apiKey, eventStreams: services.eventStreams))
        }
    }
}

/// Sends requests with a tenant's API key and decodes JSON answers.
struct APIClient: Sendable {
    let http: any TestClientProtocol
    let apiKey: String
    /// The API's event streams, for what only they know (their database reads).
    var eventStreams: EventStreams?

    func with(apiKey: String) -> APIClient { APIClient(http: http, apiKey: apiKey, eventStreams: eventStreams) }

    struct Answer: Sendable {
        var status: Int
        var json: JSONValue
        var headers: HTTPFields
    }

    func request(_ method: HTTPRequest.Method, _ path: String, body: JSONValue?, headers: HTTPFields = [:]) async throws -> Answer {
        var headers = headers
        headers[.authorization] = "Bearer \(apiKey)"
        let buffer = body.map { ByteBuffer(bytes: $0.serialized()) }
        return try await http.execute(uri: path, method: method, headers: headers, body: buffer) { response in
            let bytes = Array(response.body.readableBytesView)
            let json = bytes.isEmpty ? JSONValue.null : ((try? JSONValue.parse(bytes)) ?? .string(String(decoding: bytes, as: UTF8.self)))
            return Answer(status: Int(response.status.code), json: json, headers: response.headers)
        }
    }

    func get(_ path: String, headers: HTTPFields = [:]) async throws -> Answer {
        try await request(.get, path, body: Optional<JSONValue>.none, headers: headers)
    }

    /// A POST without a body (a command).
    func post(_ path: String, headers: HTTPFields = [:]) async throws -> Answer {
        try await request(.post, path, body: Optional<JSONValue>.none, headers: headers)
    }

    func post(_ path: String, _ body: JSONValue, headers: HTTPFields = [:]) async throws -> Answer {
        try await request(.post, path, body: body, headers: headers)
    }
}
