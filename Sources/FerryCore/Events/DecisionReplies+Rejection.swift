extension DecisionReplies {
    /// Why Ferry cannot honour a receiver's reply to a decision event, or nil when it can. A reply
    /// Ferry cannot honour (a disposition it does not offer, such as `becomeStream`, or one it does
    /// not know, or a member missing) is a rejected reply: URLSession's default applies, and the
    /// delivery records this reason. The reason never quotes the reply, which may carry credentials.
    public static func rejection(
        of reply: JSONValue, to type: EventType, proposed: TransferRequest, urlChecker: some URLSyntaxChecker
    ) -> String? {
        switch type {
        case .taskWillPerformHTTPRedirection:
            guard redirect(reply, proposed: proposed, urlChecker: urlChecker) == nil else { return nil }
            return reply.objectValue?["request"] == nil
                ? "the reply has no \"request\" (an object to follow, null to stop)"
                : "the reply's \"request\" is not a valid request"
        case .taskDidReceiveChallenge, .sessionDidReceiveChallenge:
            guard challenge(reply) == nil else { return nil }
            if reply["disposition"]?.stringValue == "useCredential" {
                return "useCredential needs a \"credential\" with a \"user\" and a \"password\" (without NUL or line breaks)"
            }
            return dispositionRejection(reply, offered: ["useCredential", "performDefaultHandling", "cancelAuthenticationChallenge", "rejectProtectionSpace"])
        case .dataTaskDidReceiveResponse:
            guard response(reply) == nil else { return nil }
            return dispositionRejection(reply, offered: ["allow", "cancel", "becomeDownload"])
        case .dataTaskWillCacheResponse:
            guard allowsCaching(reply) == nil else { return nil }
            return "the reply has no \"cachedResponse\" (null keeps the response out of the cache)"
        case .taskWillBeginDelayedRequest:
            guard delayedRequest(reply, original: proposed, urlChecker: urlChecker) == nil else { return nil }
            if reply["disposition"]?.stringValue == "useNewRequest" {
                return "useNewRequest needs a valid \"request\""
            }
            return dispositionRejection(reply, offered: ["continueLoading", "useNewRequest", "cancel"])
        default:
            return nil
        }
    }

    /// Dispositions URLSession has and Ferry does not offer, with why.
    static let unofferedDispositions = [
        "becomeStream": "\"becomeStream\" is not offered: Ferry has no stream tasks",
    ]

    private static func dispositionRejection(_ reply: JSONValue, offered: [String]) -> String {
        let expected = offered.map { "\"\($0)\"" }.joined(separator: ", ")
        guard let value = reply["disposition"], value != .null else {
            return "the reply has no \"disposition\" (one of \(expected))"
        }
        guard let text = value.stringValue else { return "the reply's \"disposition\" is not a string (one of \(expected))" }
        if let why = unofferedDispositions[text] { return "the disposition \(why)" }
        return "the reply's \"disposition\" is not one Ferry knows (one of \(expected))"
    }
}
