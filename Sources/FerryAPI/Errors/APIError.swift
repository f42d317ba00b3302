import FerryCore
import FerryStore
import Foundation
import Hummingbird

/// Every error a handler throws becomes one of these, and this decides the response:
/// an RFC 9457 `application/problem+json` body whose `detail` names the offending field.
/// A `description` never carries secrets or another tenant's data.
public struct APIError: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    /// The problem's short name, used in its `type` URI (`urn:ferry:problem:<slug>`).
    public var slug: String
    public var title: String
    public var detail: String
    /// The dotted path of the request field at fault, when one is.
    public var field: String?
    public var headers: HTTPFields = [:]

    public var description: String { "\(status.code) \(slug): \(detail)" }

    public static func badRequest(_ detail: String, field: String? = nil) -> APIError {
        APIError(status: .badRequest, slug: "invalid-request", title: "The request is invalid.", detail: detail, field: field)
    }

    public static func unauthorized(_ detail: String) -> APIError {
        var error = APIError(status: .unauthorized, slug: "unauthorized", title: "Authentication is required.", detail: detail)
        error.headers[.wwwAuthenticate] = "Bearer"
        return error
    }

    public static func forbidden(_ detail: String) -> APIError {
        APIError(status: .forbidden, slug: "forbidden", title: "The request is not allowed.", detail: detail)
    }

    public static func notFound(_ resource: String) -> APIError {
        APIError(status: .notFound, slug: "not-found", title: "Not found.", detail: "No such \(resource).")
    }

    public static func conflict(_ detail: String) -> APIError {
        APIError(status: .conflict, slug: "conflict", title: "The request conflicts with the resource's state.", detail: detail)
    }

    /// What existed and was removed on purpose (a session's `reset` removed a task's body or file).
    public static func gone(_ detail: String) -> APIError {
        APIError(status: .gone, slug: "gone", title: "The resource was removed.", detail: detail)
    }

    public static func tooLarge(_ detail: String) -> APIError {
        APIError(status: .contentTooLarge, slug: "too-large", title: "The request body is too large.", detail: detail)
    }

    /// The server's disk is at its reserve (RFC 4918's 507).
    public static func insufficientStorage(_ detail: String) -> APIError {
        APIError(status: .init(code: 507, reasonPhrase: "Insufficient Storage"), slug: "insufficient-storage", title: "The server cannot store more now.", detail: detail)
    }

    public static func unavailable(_ detail: String) -> APIError {
        APIError(status: .serviceUnavailable, slug: "unavailable", title: "The service is temporarily unavailable.", detail: detail)
    }

    /// PostgreSQL out of reach before the request did anything: not the request's fault nor
    /// Ferry's, and the client may send it again shortly.
    static func databaseUnreachable() -> APIError {
        var problem = APIError.unavailable("The database cannot be reached; nothing was done. Retry shortly.")
        problem.headers[.retryAfter] = "5"
        return problem
    }

    public static func `internal`() -> APIError {
        APIError(status: .internalServerError, slug: "internal", title: "Internal error.", detail: "Ferry failed to handle the request; the request id identifies it in the logs.")
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var problem: [String: JSONValue] = [
            "type": .string("urn:ferry:problem:\(slug)"),
            "title": .string(title),
            "status": .number(Double(status.code)),
            "detail": .string(detail),
            "instance": .string(request.uri.path),
        ]
        if let field { problem["field"] = .string(field) }
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: JSONValue.object(problem).serialized())))
    }
}

extension APIError {
    /// The API's view of errors from lower layers.
    static func translating(_ error: any Error) -> APIError? {
        switch error {
        case let error as APIError:
            return error
        case let error as ValidationError:
            var problem = APIError.badRequest(error.description, field: error.field.isEmpty ? nil : error.field)
            if error.status == 413 {
                problem.status = .contentTooLarge
                problem.slug = "too-large"
            } else if error.status == 422 {
                problem.status = .unprocessableContent
            }
            return problem
        case let error as JSONSyntaxError:
            return .badRequest(error.description, field: error.field)
        case let error as StoreError:
            switch error {
            case .notFound(let resource): return .notFound(resource)
            case .conflict(let detail, let field):
                var problem = APIError.conflict(detail)
                problem.field = field
                return problem
            case .idempotencyKeyReused:
                return APIError(
                    status: .unprocessableContent, slug: "idempotency-key-reused",
                    title: "The Idempotency-Key was used with another request.",
                    detail: "The Idempotency-Key was already used with a different request body; use a new key for a new request.",
                    field: "Idempotency-Key"
                )
            case .invalidReference(let field, let message): return .badRequest("\(field): \(message)", field: field)
            }
        case let error as ResumeDataError:
            return .badRequest("resumeData: \(error)", field: "resumeData")
        case let error as HTTPError:
            return APIError(
                status: error.status, slug: slug(for: error.status),
                title: error.status.reasonPhrase, detail: error.body ?? "\(error.status.reasonPhrase)."
            )
        default:
            return nil
        }
    }

    private static func slug(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 404: "not-found"
        case 405: "method-not-allowed"
        case 413: "too-large"
        case 414: "uri-too-long"
        case 431: "headers-too-large"
        default: "http-\(status.code)"
        }
    }
}
