import Hummingbird
import NIOCore

/// Reads what a handler left unread of a request body, up to a bound, before the answer goes out.
///
/// Clients such as Python's urllib send the whole body before they read a byte of the answer,
/// and ask for `Connection: close`. Hummingbird reads no more of such a request once the
/// handler has answered, so an early answer (413 for a body over a route's limit, 401, 404…)
/// sat behind a client blocked on a full socket until the client's own timeout. Reading the
/// rest lets those clients see the answer. Past `maximumDrainedBytes` the answer says
/// `Connection: close` and the connection closes once it is written: no client can make Ferry
/// read an endless body.
public struct RequestBodyDrainMiddleware: RouterMiddleware {
    public typealias Context = FerryRequestContext

    /// Well beyond the largest body a JSON route accepts (a task creation, about 11 MiB), so a
    /// client that overshoots a limit by a little still reads its 413.
    public static let maximumDrainedBytes = 32 * 1024 * 1024

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let cursor = RequestBodyCursor(request.body)
        var request = request
        request.body = RequestBody(asyncSequence: cursor)
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            if await !cursor.drain(upTo: Self.maximumDrainedBytes) { closeAfterAnswer(context) }
            throw error
        }
        if await !cursor.drain(upTo: Self.maximumDrainedBytes) {
            response.headers[.connection] = "close"
            closeAfterAnswer(context)
        }
        return response
    }

    /// Hummingbird's connection handler closes a connection that is asked to quiesce as soon
    /// as the answer in progress is written.
    private func closeAfterAnswer(_ context: Context) {
        context.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }
}

/// The request body as the handler reads it, remembering where the handler stopped so the
/// rest can be read afterwards (a request body can be iterated only once).
///
/// `@unchecked Sendable`: one task at a time uses it — the handler while it runs, then the
/// middleware once the handler has returned.
final class RequestBodyCursor: AsyncSequence, @unchecked Sendable {
    typealias Element = ByteBuffer

    private let body: RequestBody
    private var iterator: RequestBody.AsyncIterator?
    private var isFinished = false

    init(_ body: RequestBody) {
        self.body = body
    }

    func next() async throws -> ByteBuffer? {
        guard !isFinished else { return nil }
        var iterator = self.iterator ?? body.makeAsyncIterator()
        let chunk = try await iterator.next()
        self.iterator = iterator
        if chunk == nil { isFinished = true }
        return chunk
    }

    /// Reads and drops the rest of the body; false when more than `limit` bytes were left, or
    /// the client went away.
    func drain(upTo limit: Int) async -> Bool {
        var drained = 0
        do {
            while let chunk = try await next() {
                drained += chunk.readableBytes
                if drained > limit { return false }
            }
            return true
        } catch {
            return false
        }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let cursor: RequestBodyCursor

        func next() async throws -> ByteBuffer? {
            try await cursor.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(cursor: self)
    }
}
