import FerryCore
import FerryStore
import HTTPTypes
import Hummingbird

/// The event log: what the webhooks deliver, readable and replayable, for sessions with or
/// without a delegate. A task's events by sequence; a session's, and the stream of all the
/// tenant's events, by position in the log, which the tenant sees only as its own cursors
/// (`EventCursor`: the log's positions are shared by every tenant).
struct EventRoutes {
    let services: APIServices

    func register(on router: RouterGroup<TenantContext>) {
        router.get("tasks/:taskID/events") { request, context in
            let id = try context.parameters.require("taskID")
            let cursor = services.eventCursors.forTenant(context.tenantID)
            // `after` is a sequence here: the task's own count.
            let (limit, after) = try await Self.page(request) { try Self.sequence($0, field: $1) }
            let page = try await services.database.events.taskEvents(tenantID: context.tenantID, taskID: id, after: after, limit: limit)
            return JSONResponse.list(page.items.map { EventView($0, cursor: cursor) }, nextCursor: page.nextCursor)
        }

        router.get("sessions/:sessionID/events") { request, context in
            let id = try context.parameters.require("sessionID")
            let cursor = services.eventCursors.forTenant(context.tenantID)
            let (limit, after) = try await Self.page(request) {
                try await Self.position($0, field: $1, cursor: cursor, events: services.database.events)
            }
            let page = try await services.database.events.sessionEvents(tenantID: context.tenantID, sessionID: id, after: after, limit: limit)
            let nextCursor = page.nextCursor == nil ? nil : page.items.last.map { String(cursor.encode($0.position)) }
            return JSONResponse.list(page.items.map { EventView($0, cursor: cursor) }, nextCursor: nextCursor)
        }

        router.get("events/stream") { request, context in
            let query = QueryParameters(request)
            let sessionID = try await Self.session(named: try query.string("sessionId"), of: context.tenantID, in: services.database.sessions)
            // Resume after the last event seen (what EventSource sends when it reconnects, to the
            // same URL: `?after=` is read, and checked, either way), or after `?after=`;
            // otherwise start at the end of the log.
            let cursor = services.eventCursors.forTenant(context.tenantID)
            let events = services.database.events
            let after = try await Self.position(try query.string("after", maxLength: 20), field: "query.after", cursor: cursor, events: events)
            var start = try await Self.position(request.headers[Self.lastEventID], field: "Last-Event-ID", cursor: cursor, events: events) ?? after
            try query.finish()
            let slot = try services.eventStreams.admit(tenantID: context.tenantID)
            if start == nil { start = try await services.database.events.safePosition() }
            // The middleware admitted this key: it parses.
            let key = request.bearerToken.flatMap(APIKey.parse)
            let (tenants, tenantID) = (services.database.tenants, context.tenantID)
            let stream = EventStream(
                events: services.database.events, hub: services.hub, streams: services.eventStreams,
                tenantID: context.tenantID, sessionID: sessionID, position: start ?? 0, cursor: cursor
            ) {
                guard let key, let tenant = try await tenants.authenticate(key) else { return false }
                return tenant.id == tenantID && tenant.status == .active
            }
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

    /// The session `?sessionId=` names (`shared` too, as in paths); another tenant's, or none, is
    /// a 404 naming the parameter.
    static func session(named id: String?, of tenantID: String, in sessions: SessionStore) async throws -> String? {
        guard let id else { return nil }
        do {
            if id == SharedSessionMiddleware.alias { return try await sessions.shared(tenantID: tenantID).id }
            return try await sessions.find(tenantID: tenantID, id: id).id
        } catch StoreError.notFound {
            var problem = APIError.notFound("session")
            problem.detail = "query.sessionId: no such session."
            problem.field = "query.sessionId"
            throw problem
        }
    }

    /// `limit` and `after`, read by `after` (a sequence or a position).
    static func page(
        _ request: Request, after: (_ text: String?, _ field: String) async throws -> Int64?
    ) async throws -> (limit: Int, after: Int64?) {
        let query = QueryParameters(request)
        let limit = try query.integer("limit", in: 1...1000, default: 100)
        let after = try await after(try query.string("after", maxLength: 20), "query.after")
        try query.finish()
        return (limit, after)
    }

    /// A task's `after`: a sequence number.
    static func sequence(_ text: String?, field: String) throws -> Int64? {
        guard let text else { return nil }
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw APIError.badRequest("\(field) must be an event sequence (a whole number) from an earlier answer.", field: field)
        }
        return value
    }

    /// A position in the log, from the tenant's cursor (0: the beginning). One in 256 made-up
    /// numbers passes the cursor's check, and almost all of those lead past the end of the log,
    /// where a list would answer nothing and a stream wait for good: refused as well.
    static func position(_ text: String?, field: String, cursor: EventCursor, events: EventLogStore) async throws -> Int64? {
        guard let text else { return nil }
        let refusal = APIError.badRequest("\(field) must be an event position (a whole number) from an earlier answer.", field: field)
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), let position = cursor.decode(value) else { throw refusal }
        if position > 0 {
            let isWithinLog = try await events.isWithinLog(position)
            guard isWithinLog else { throw refusal }
        }
        return position
    }
}
