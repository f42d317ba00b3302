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
            } else if FerryDatabase.failedBeforeAnyStatement(error), !contact.hasReachedServer {
                // Only when no call of the request reached the database: after one did (a
                // session created, then its delegate read), sending it again could do it twice.
                problem = .databaseUnreachable()
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

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-ID")!
    static let idempotencyKey = Self("Idempotency-Key")!
    static let lastEventID = Self("Last-Event-ID")!
}
