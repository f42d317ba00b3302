import Foundation

/// The `Set-Cookie` fields of one response, to apply to a session's jar. The fields themselves
/// travel (not the resulting cookies) so that deletions apply too, and so the same rules run
/// wherever the jar lives.
public struct CookieUpdate: Codable, Sendable, Equatable {
    public var sessionID: String
    public var setCookieFields: [String]
    public var requestURL: String
    public var mainDocumentHost: String?
    public var receivedAt: Date

    public init(sessionID: String, setCookieFields: [String], requestURL: String, mainDocumentHost: String?, receivedAt: Date) {
        self.sessionID = sessionID
        self.setCookieFields = setCookieFields
        self.requestURL = requestURL
        self.mainDocumentHost = mainDocumentHost
        self.receivedAt = receivedAt
    }
}

extension CookieJar {
    /// Applies an update under the session's rules.
    public mutating func apply(_ update: CookieUpdate, handling: CookieHandling) {
        guard let url = CookieURL(string: update.requestURL) else { return }
        storeCookies(
            fromSetCookieFields: update.setCookieFields, requestURL: url, mainDocumentHost: update.mainDocumentHost,
            handling: handling, now: update.receivedAt
        )
        removeExpired(now: update.receivedAt)
    }
}
