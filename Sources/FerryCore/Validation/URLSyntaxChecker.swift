/// A URL that passed validation, in the form the transfer engine will fetch.
public struct CheckedURL: Sendable, Equatable {
    public var url: String
    public var scheme: String
    public var host: String

    public init(url: String, scheme: String, host: String) {
        self.url = url
        self.scheme = scheme
        self.host = host
    }
}

/// Parses URLs for validation. FerryCore does no I/O and links no C library, so the parser is
/// injected: the API gives it libcurl's own parser, so what is validated is what curl fetches.
public protocol URLSyntaxChecker: Sendable {
    /// Throws a `ValidationError` for `field` unless `text` is an absolute http or https URL with a host.
    func check(_ text: String, field: String) throws -> CheckedURL
}

extension URLSyntaxChecker {
    /// The longest URL Ferry accepts. Browsers and servers commonly cap near 8 KiB.
    public static var maximumURLLength: Int { 8192 }
}
