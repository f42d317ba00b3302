import FerryCore
import Foundation
import Hummingbird
import NIOCore

/// Reading JSON request bodies with a bound: too large is 413, not JSON is 400.
enum JSONBody {
    /// Sessions, tenants and commands are small.
    static let smallLimit = 64 * 1024
    /// Task creation carries inline bodies (base64) of up to `TaskCreation.maximumInlineBodyBytes`.
    static let taskLimit = TaskCreation.maximumInlineBodyBytes * 4 / 3 + 64 * 1024
    /// A batch of up to a thousand tasks with headers and descriptions; their inline request
    /// bodies share it (a body as large as a single creation allows goes alone).
    static let batchLimit = 8 * 1024 * 1024

    /// The raw bytes, for fingerprinting, and the parsed document.
    static func read(_ request: Request, limit: Int) async throws -> (bytes: [UInt8], value: JSONValue) {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch where Self.isTooLarge(error) {
            throw APIError.tooLarge("The body may be at most \(limit) bytes; upload large bodies as blobs.")
        }
        let bytes = Array(buffer.readableBytesView)
        guard !bytes.isEmpty else { throw APIError.badRequest("The request needs a JSON body.") }
        // The Content-Type is not checked: `curl -d` labels JSON as a form, and operators drive
        // Ferry with curl. A body that is not JSON gets a 400 saying so.
        return (bytes, try JSONValue.parse(bytes))
    }

    /// Collecting more than the limit fails with NIO's error, or Hummingbird's 413.
    static func isTooLarge(_ error: any Error) -> Bool {
        error is NIOTooManyBytesError || (error as? HTTPError)?.status == .contentTooLarge
    }

    /// An optional body (command endpoints accept none or `{}`).
    static func readOptional(_ request: Request) async throws -> JSONValue? {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: smallLimit)
        } catch where Self.isTooLarge(error) {
            throw APIError.tooLarge("The body may be at most \(smallLimit) bytes.")
        }
        let bytes = Array(buffer.readableBytesView)
        // Not `bytes.isEmpty ? nil : …`: JSONValue is ExpressibleByNilLiteral, so that `nil`
        // would become JSONValue.null instead of no body.
        guard !bytes.isEmpty else { return nil }
        return try JSONValue.parse(bytes)
    }
}

/// JSON responses, encoded the same way everywhere: ISO 8601 dates with milliseconds.
enum JSONResponse {
    static let encoder = JSONCoding.makeEncoder()

    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        make(bytes: try encoder.encode(value), status: status, headers: headers)
    }

    /// A view written with `JSONWriter`.
    static func make(writing view: some JSONWritable) -> Response {
        make(bytes: JSONWriter.document(view))
    }

    /// `{data: [...], nextCursor}` of views written with `JSONWriter`.
    static func list(_ views: [some JSONWritable], nextCursor: String?) -> Response {
        make(bytes: JSONWriter.list(views, nextCursor: nextCursor))
    }

    /// A document already written (`JSONWriter`, or the encoder above).
    static func make(bytes: some Sequence<UInt8>, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
