extension TestOrigin {
    /// An origin for an upload suspended and resumed with a new body stream: a request whose
    /// body is `held` waits (until the client cuts its connection, or five seconds); any other
    /// is answered 200 with "true" when its body is `expected`, "false" otherwise.
    public static func holdingBody(_ held: [UInt8], answeringWhetherBodyIs expected: [UInt8]) throws -> TestOrigin {
        try TestOrigin { request, responder in
            if request.body == held { responder.pause(seconds: 5) }
            try responder.respond(status: 200, body: Array("\(request.body == expected)".utf8))
        }
    }
}
