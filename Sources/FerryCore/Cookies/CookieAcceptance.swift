/// `HTTPCookieStorage.cookieAcceptPolicy`: which received cookies a session keeps.
public enum CookieAcceptance {
    /// Whether a cookie received on a task may be stored under `policy`.
    ///
    /// `mainDocumentHost` is URLRequest's `mainDocumentURL` host. Ferry has no documents, so
    /// the main document of a task is its original request: the engine passes the host of the
    /// task's `originalRequest`, and a cookie set by a redirect hop to an unrelated domain is
    /// refused, as a third-party cookie would be. With no main document, nothing restricts it.
    public static func shouldAccept(_ cookie: Cookie, policy: CookieAcceptPolicy, mainDocumentHost: String?) -> Bool {
        switch policy {
        case .always:
            return true
        case .never:
            return false
        case .onlyFromMainDocumentDomain:
            guard let mainDocumentHost else { return true }
            return CookieDomain.matches(host: cookie.domain, domain: mainDocumentHost)
                || CookieDomain.matches(host: mainDocumentHost, domain: cookie.domain)
        }
    }
}

/// What a session's configuration lets cookies do on its tasks: the one place that reads
/// `httpShouldSetCookies` and `httpCookieAcceptPolicy`, so the engine cannot mix them up.
public struct CookieHandling: Sendable, Equatable {
    /// `URLSessionConfiguration.httpShouldSetCookies`.
    public var httpShouldSetCookies: Bool
    /// `URLSessionConfiguration.httpCookieAcceptPolicy`.
    public var acceptPolicy: CookieAcceptPolicy

    public init(httpShouldSetCookies: Bool, acceptPolicy: CookieAcceptPolicy) {
        self.httpShouldSetCookies = httpShouldSetCookies
        self.acceptPolicy = acceptPolicy
    }

    public init(configuration: SessionConfiguration) {
        self.init(httpShouldSetCookies: configuration.httpShouldSetCookies, acceptPolicy: configuration.httpCookieAcceptPolicy)
    }

    /// `httpShouldSetCookies == false`: no `Cookie` header is added from the jar.
    public var sendsCookies: Bool { httpShouldSetCookies }

    /// `httpShouldSetCookies == false` also means nothing received is stored; `never` likewise.
    public var storesCookies: Bool { httpShouldSetCookies && acceptPolicy != .never }
}
