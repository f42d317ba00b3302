import FerryStore
import HTTPTypes
import Hummingbird
import Logging

/// The outermost middleware: turns every error into problem+json (an unexpected one into a
/// 500 that reveals nothing but the request id, and is logged in full), and stamps every
/// response with `X-Request-ID`.
public struct ProblemMiddleware: RouterMiddleware {
    public typealias Context = FerryRequestContext

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        let contact = DatabaseContact()
        do {
            response = try await DatabaseContact.$current.withValue(contact) { try await next(request, context) }
        } catch {
            let problem: APIError
            if let translated = APIError.translating(error) {
                problem = translated
            } else if let unreachable = Self.databaseProblem(for: error, method: request.method, reachedServer: contact.hasReachedServer) {
                problem = unreachable
            } else {
                // The description, not the debug one: a PostgreSQL error's debug description has
                // the server's message and detail, which may quote a bound value (a secret).
                context.logger.error("unhandled error", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
                problem = .internal()
            }
            response = try problem.response(from: request, context: context)
        }
        response.headers[.xRequestID] = context.requestID
        return response
    }
}

extension ProblemMiddleware {
    /// A 503 with Retry-After for PostgreSQL out of reach, when sending the request again is
    /// safe: no call of it reached the database (after one did, say a session created and then
    /// its delegate read, sending it again could do it twice), or it only reads (GET, HEAD),
    /// whatever it reached. Nil otherwise: a write that lost its connection mid-statement may
    /// or may not have been done, which a 500 says by asking nothing of the client.
    static func databaseProblem(for error: any Error, method: HTTPRequest.Method, reachedServer: Bool) -> APIError? {
        if FerryDatabase.failedBeforeAnyStatement(error), !reachedServer { return .databaseUnreachable() }
        if FerryDatabase.isUnreachable(error), method == .get || method == .head { return .databaseUnreachable() }
        return nil
    }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-ID")!
    static let idempotencyKey = Self("Idempotency-Key")!
    static let lastEventID = Self("Last-Event-ID")!
}
