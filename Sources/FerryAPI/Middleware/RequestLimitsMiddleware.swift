import Hummingbird

/// Bounds on what a request may carry before any handler looks at it (SAFETY.md "Limits").
public struct RequestLimitsMiddleware: RouterMiddleware {
    public typealias Context = FerryRequestContext

    /// The longest request target (path and query) Ferry reads.
    public static let maximumTargetLength = 8 * 1024
    /// The most header bytes a request may send.
    public static let maximumHeaderBytes = 32 * 1024

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.description.utf8.count <= Self.maximumTargetLength else {
            throw APIError(
                status: .uriTooLong, slug: "uri-too-long", title: "The request URI is too long.",
                detail: "The request target may be at most \(Self.maximumTargetLength) bytes long."
            )
        }
        let headerBytes = request.headers.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 }
        guard headerBytes <= Self.maximumHeaderBytes else {
            throw APIError(
                status: .requestHeaderFieldsTooLarge, slug: "headers-too-large", title: "The request headers are too large.",
                detail: "The request headers may be at most \(Self.maximumHeaderBytes) bytes in all."
            )
        }
        return try await next(request, context)
    }
}
