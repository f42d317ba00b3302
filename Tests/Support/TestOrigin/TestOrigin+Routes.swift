extension TestOrigin {
    /// A handler that dispatches on the request's path (query ignored) and answers 404 for
    /// any other path: `TestOrigin(TestOrigin.routes(["/a": ..., "/b": ...]))`.
    public static func routes(_ table: [String: Handler]) -> Handler {
        { request, responder in
            guard let route = table[request.path] else {
                try responder.respond(
                    status: 404,
                    headers: [("Content-Type", "text/plain")],
                    body: Array("no route for \(request.path)\n".utf8)
                )
                return
            }
            try route(request, responder)
        }
    }
}
