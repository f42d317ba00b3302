import FerryAPI
import FerryCore
import FerryStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
import Testing

/// The OpenAPI document is written by hand; these tests keep it true to the router: the same
/// (method, path) pairs both ways, problem+json for every error, and the security each area
/// really applies. No database is needed: building the router and serving `/openapi.json`
/// touch none (the pool connects lazily and is never asked).
@Suite("The OpenAPI document at /openapi.json matches the routes Ferry registers")
struct OpenAPIDocumentTests {
    /// An operation as both sides name it: lowercase method, path template with `{param}`.
    struct Operation: Hashable, Comparable, CustomStringConvertible {
        var method: String
        var path: String
        var description: String { "\(method.uppercased()) \(path)" }
        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.path, lhs.method) < (rhs.path, rhs.method) }
    }

    static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
    static let publicPaths: Set<String> = ["/healthz", "/readyz", "/openapi.json"]
    /// Outside /admin/v1, yet the operator's: it counts every tenant's work.
    static let operatorPaths: Set<String> = ["/metrics"]
    /// Error responses that are not problem+json on purpose: `/readyz` answers its readiness.
    static let nonProblemErrors: Set<String> = ["GET /readyz 503"]

    @Test("the served document is OpenAPI 3.1 with both bearer schemes, and every $ref resolves")
    func documentShape() async throws {
        let document = try await Self.servedDocument()
        let version = try #require(document["openapi"]?.stringValue)
        #expect(version.hasPrefix("3.1."))
        #expect(document["info"]?["title"]?.stringValue == "Ferry")
        #expect(document["info"]?["version"]?.stringValue?.isEmpty == false)
        let schemes = try #require(document["components"]?["securitySchemes"]?.objectValue)
        for name in ["TenantKey", "OperatorToken"] {
            #expect(schemes[name]?["type"]?.stringValue == "http", "\(name) is an HTTP scheme")
            #expect(schemes[name]?["scheme"]?.stringValue == "bearer", "\(name) is a bearer scheme")
        }
        let unresolved = Self.references(in: document).filter { Self.target(of: $0, in: document) == nil }
        #expect(unresolved.isEmpty, "unresolved references: \(unresolved.sorted())")
    }

    @Test("the document's operations are exactly the router's, both ways")
    func operationsMatchTheRouter() async throws {
        let documented = Set(try Self.operations(of: try await Self.servedDocument()).keys)
        let registered = try await Self.withRouter { router in
            Set(router.routes.map { Operation(method: $0.method.rawValue.lowercased(), path: $0.path.description) })
        }
        #expect(registered.count > 40, "the router registers the whole API")
        let undocumented = registered.subtracting(documented).sorted().map(\.description)
        let unregistered = documented.subtracting(registered).sorted().map(\.description)
        #expect(undocumented.isEmpty, "routes missing from openapi.json: \(undocumented)")
        #expect(unregistered.isEmpty, "openapi.json documents routes Ferry does not have: \(unregistered)")
    }

    @Test("every operation documents its errors as problem+json with the Problem schema")
    func errorsAreProblems() async throws {
        let document = try await Self.servedDocument()
        for (operation, item) in try Self.operations(of: document) {
            let responses = try #require(item["responses"]?.objectValue, "\(operation) has responses")
            let errors = responses.filter { (Int($0.key) ?? 0) >= 400 }
            #expect(!errors.isEmpty, "\(operation) documents its errors")
            #expect(errors["414"] != nil && errors["431"] != nil, "\(operation) documents the request limits (414, 431)")
            for (status, response) in errors where !Self.nonProblemErrors.contains("\(operation) \(status)") {
                let resolved = Self.resolve(response, in: document)
                let schema = resolved?["content"]?["application/problem+json"]?["schema"]
                #expect(schema.map { Self.references(in: $0).contains("#/components/schemas/Problem") } == true,
                        "\(operation) \(status) is application/problem+json with the Problem schema")
            }
        }
    }

    @Test("/v1 takes the tenant key, /admin/v1 and /metrics the operator token, the probes nothing")
    func securityFollowsTheArea() async throws {
        let document = try await Self.servedDocument()
        for (operation, item) in try Self.operations(of: document) {
            let requirements: [JSONValue] = if case .array(let list)? = item["security"] { list } else { [] }
            let schemes = requirements.compactMap { $0.objectValue?.keys.first }
            let errors = Set(item["responses"]?.objectValue?.keys.map { $0 } ?? [])
            if operation.path.hasPrefix("/v1/") {
                #expect(schemes == ["TenantKey"], "\(operation) takes the tenant key")
                #expect(errors.isSuperset(of: ["401", "403", "429"]), "\(operation) documents 401, 403 and 429")
            } else if operation.path.hasPrefix("/admin/v1/") || Self.operatorPaths.contains(operation.path) {
                #expect(schemes == ["OperatorToken"], "\(operation) takes the operator token")
                #expect(errors.contains("401"), "\(operation) documents 401")
            } else {
                #expect(Self.publicPaths.contains(operation.path), "\(operation) is public")
                #expect(item["security"] == .array([]), "\(operation) declares no security")
            }
        }
    }

    @Test("every {param} of a path is declared as a path parameter")
    func pathParametersAreDeclared() async throws {
        let document = try await Self.servedDocument()
        let paths = try #require(document["paths"]?.objectValue)
        for (path, item) in paths {
            let templated = Set(path.split(separator: "/").filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) })
            var shared = Self.pathParameters(item["parameters"], in: document)
            for method in Self.methods { if let operation = item[method] { shared.formUnion(Self.pathParameters(operation["parameters"], in: document)) } }
            #expect(shared == templated, "\(path) declares its path parameters \(templated.sorted())")
        }
    }

    // MARK: Helpers

    /// `GET /openapi.json` through the real router, checked and parsed.
    static func servedDocument() async throws -> JSONValue {
        let bytes = try await withRouter { router in
            try await Application(router: router, logger: Logger(label: "openapi-test")).test(.router) { client in
                try await client.execute(uri: "/openapi.json", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/json")
                    return Array(response.body.readableBytesView)
                }
            }
        }
        #expect(bytes == OpenAPIDocument.bytes, "the router serves the bundled resource")
        return try JSONValue.parse(bytes)
    }

    /// Ferry's router over services whose database is never reached.
    static func withRouter<T: Sendable>(_ body: (Router<FerryRequestContext>) async throws -> T) async throws -> T {
        let logger = Logger(label: "openapi-test")
        let conninfo = "host=/nonexistent dbname=unused connect_timeout=1"
        let pool = PostgresPool(configuration: PostgresPoolConfiguration(conninfo: conninfo, size: 1), logger: logger)
        let services = APIServices(
            database: FerryDatabase(pool: pool),
            resumeData: ResumeDataIssuer(signingKey: [UInt8](repeating: 7, count: 32)),
            eventCursors: EventCursors(key: [UInt8](repeating: 8, count: 32)),
            hub: NotificationHub(conninfo: conninfo, logger: logger),
            files: TenantFiles(dataDirectory: FileManager.default.temporaryDirectory.path),
            readiness: { Readiness(databaseReachable: false, migrationsApplied: false, workersRunning: false) },
            metricsExposition: { Array("# no metrics\n".utf8) }
        )
        let result: Result<T, any Error>
        do { result = .success(try await body(makeRouter(services: services))) } catch { result = .failure(error) }
        await pool.close()
        return try result.get()
    }

    /// Every operation of the document by (method, path).
    static func operations(of document: JSONValue) throws -> [Operation: JSONValue] {
        let paths = try #require(document["paths"]?.objectValue, "the document has paths")
        var operations: [Operation: JSONValue] = [:]
        for (path, item) in paths {
            for (method, operation) in item.objectValue ?? [:] where methods.contains(method) {
                operations[Operation(method: method, path: path)] = operation
            }
        }
        return operations
    }

    /// Every `$ref` inside `value`.
    static func references(in value: JSONValue) -> Set<String> {
        switch value {
        case .object(let members):
            var found: Set<String> = members["$ref"]?.stringValue.map { [$0] } ?? []
            for member in members.values { found.formUnion(references(in: member)) }
            return found
        case .array(let elements):
            return elements.reduce(into: []) { $0.formUnion(references(in: $1)) }
        default:
            return []
        }
    }

    /// `value`, or what its `$ref` points to (followed through further references).
    static func resolve(_ value: JSONValue, in document: JSONValue) -> JSONValue? {
        guard let reference = value["$ref"]?.stringValue else { return value }
        return target(of: reference, in: document).flatMap { resolve($0, in: document) }
    }

    /// The value a local reference (`#/components/...`) names.
    static func target(of reference: String, in document: JSONValue) -> JSONValue? {
        guard reference.hasPrefix("#/") else { return nil }
        var target: JSONValue? = document
        for part in reference.dropFirst(2).split(separator: "/") { target = target?[String(part)] }
        return target
    }

    /// The names of the path parameters in a `parameters` list.
    static func pathParameters(_ list: JSONValue?, in document: JSONValue) -> Set<String> {
        guard case .array(let parameters)? = list else { return [] }
        return Set(parameters.compactMap { parameter in
            let resolved = resolve(parameter, in: document)
            return resolved?["in"]?.stringValue == "path" ? resolved?["name"]?.stringValue : nil
        })
    }
}
