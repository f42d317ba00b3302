import Foundation

/// One request exactly as the origin received it, kept so tests can assert on what the
/// client sent (headers such as `Range`/`If-Range`, bodies, which connection carried it).
public struct OriginRequest: Sendable {
    public var method: String
    /// The request target as sent: path plus `?query`.
    public var target: String
    /// The target's path, percent-encoding left as sent.
    public var path: String
    /// Query parameters, percent-decoded; a repeated name keeps its last value.
    public var query: [String: String]
    /// Header fields in the order received, names as the client spelled them.
    public var headers: [(name: String, value: String)]
    /// The body after removing any chunked framing.
    public var body: [UInt8]
    /// The 0-based accept order of the connection that carried this request, so tests can
    /// assert connection reuse.
    public var connectionIndex: Int
    /// `HTTP/1.1` or `HTTP/1.0`.
    public var version: String

    public init(
        method: String,
        target: String,
        headers: [(name: String, value: String)],
        body: [UInt8] = [],
        connectionIndex: Int = 0,
        version: String = "HTTP/1.1"
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.connectionIndex = connectionIndex
        self.version = version
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        self.path = parts.first.map(String.init) ?? target
        self.query = parts.count > 1 ? Self.parseQuery(String(parts[1])) : [:]
    }

    /// The first value of the header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of the header `name`, in order.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Whether the client asked to close the connection after this exchange.
    var wantsClose: Bool {
        let tokens = headerValues("Connection")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if version == "HTTP/1.0" { return !tokens.contains("keep-alive") }
        return tokens.contains("close")
    }

    private static func parseQuery(_ query: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            result[name] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return result
    }

    private static func decode(_ component: Substring) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
