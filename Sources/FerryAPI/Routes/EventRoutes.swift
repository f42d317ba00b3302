import FerryCore
import FerryStore
import HTTPTypes
import Hummingbird

/// The event log: what the webhooks deliver, readable and replayable, for sessions with or
/// without a delegate. A task's events by sequence; a session's, and the stream of all the
/// tenant's events, by position in the log.
struct EventRoutes {
    let services: APIServices

    func register(on router: RouterGroup<TenantContext>) {
        router.get("tasks/:taskID/events") { request, context in
            let id = try context.parameters.require("taskID")
            let (limit, after) = try Self.cursor(request)
            let page = try await services.database.events.taskEvents(tenantID: context.tenantID, taskID: id, after: after, limit: limit)
            return try JSONResponse.make(ListView(page, EventView.init))
        }

        router.get("sessions/:sessionID/events") { request, context in
            let id = try context.parameters.require("sessionID")
            let (limit, after) = try Self.cursor(request)
            let page = try await services.database.events.sessionEvents(tenantID: context.tenantID, sessionID: id, after: after, limit: limit)
            return try JSONResponse.make(ListView(page, EventView.init))
        }

        router.get("events/stream") { request, context in
            let query = QueryParameters(request)
            let sessionID = try query.string("sessionId")
            if let sessionID {
                // Another tenant's session is simply not found.
                _ = try await services.database.sessions.find(tenantID: context.tenantID, id: sessionID)
            }
            // Resume after the last event seen (what EventSource sends when it reconnects, to the
            // same URL: `?after=` is read, and checked, either way), or after `?after=`;
            // otherwise start at the end of the log.
            let after = try Self.position(try query.string("after", maxLength: 20), field: "query.after")
            var start = try Self.position(request.headers[Self.lastEventID], field: "Last-Event-ID") ?? after
            try query.finish()
            let slot = try services.eventStreams.admit(tenantID: context.tenantID)
            if start == nil { start = try await services.database.events.safePosition() }
            let stream = EventStream(
                events: services.database.events, hub: services.hub, streams: services.eventStreams,
                tenantID: context.tenantID, sessionID: sessionID, position: start ?? 0
            )
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                // The slot is held as long as the stream runs (or, unwritten, until the response goes).
                defer { withExtendedLifetime(slot) {} }
                // A client that goes away ends its stream at once, giving its slot back to a
                // reconnecting EventSource, rather than at the next write (up to 15 s later).
                // (The request's body was read to its end by RequestBodyDrainMiddleware, which
                // keeps the connection's own body underneath, as this needs.)
                try await request.body.consumeWithCancellationOnInboundClose { _ in
                    try await stream.run(writer: &writer)
                }
                try await writer.finish(nil)
            })
        }
    }

    static let lastEventID = HTTPField.Name("Last-Event-ID")!

    /// `limit` and `after` where `after` is a number (a sequence or a position).
    static func cursor(_ request: Request) throws -> (limit: Int, after: Int64?) {
        let query = QueryParameters(request)
        let limit = try query.integer("limit", in: 1...1000, default: 100)
        let after = try position(try query.string("after", maxLength: 20), field: "query.after")
        try query.finish()
        return (limit, after)
    }

    static func position(_ text: String?, field: String) throws -> Int64? {
        guard let text else { return nil }
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw APIError.badRequest("\(field) must be an event position (a whole number) from an earlier answer.", field: field)
        }
        return value
    }
}
