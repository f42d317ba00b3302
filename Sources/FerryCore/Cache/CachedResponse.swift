import Foundation

/// One header field of a cached response, kept in the order the server sent it.
public struct CachedHeaderField: Codable, Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A stored response of a session's URL cache (`CachedURLResponse`): its head and the facts
/// freshness needs; the body lives apart under `bodyKey`, or, when small, in `inlineBody`.
/// Persisted as JSON by the store.
public struct CachedResponse: Codable, Sendable, Equatable {
    /// The URL the response answers (the cache key's URL), not a later redirect target.
    public var url: String
    /// The request method that produced it; always GET for what Ferry stores.
    public var method: String
    public var statusCode: Int
    /// In order, hop-by-hop fields removed (RFC 9111 §3.1).
    public var headerFields: [CachedHeaderField]
    /// The request fields named by the response's `Vary`, lowercased names to normalised
    /// values (`CacheVary`); a field the request did not carry is absent.
    public var varyingRequestHeaders: [String: String]
    /// When the request that produced it was sent (`request_time`, RFC 9111 §4.2.3).
    public var requestTime: Date
    /// When its head arrived (`response_time`).
    public var responseTime: Date
    /// The store's name for the body; opaque here.
    public var bodyKey: String
    public var bodySize: Int64
    /// The body itself, when the store keeps it in the entry rather than under `bodyKey`
    /// (small bodies; absent from entries stored before there were any).
    public var inlineBody: Data?

    public init(
        url: String,
        request: TransferRequest,
        head: ResponseHead,
        requestTime: Date,
        responseTime: Date,
        bodyKey: String,
        bodySize: Int64
    ) {
        self.url = url
        method = request.httpMethod.uppercased()
        statusCode = head.statusCode
        headerFields = CachedResponse.storableFields(of: head)
        varyingRequestHeaders = CacheVary.selectingHeaders(request: request, response: head)
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.bodyKey = bodyKey
        self.bodySize = bodySize
    }

    /// The stored head, exactly as stored.
    public var head: ResponseHead {
        ResponseHead(statusCode: statusCode, fields: headerFields.map { ($0.name, $0.value) })
    }

    public var cacheControl: CacheControl { CacheControl(head: head) }

    public func value(of name: String) -> String? {
        head.value(of: name)
    }

    /// The head to deliver when the entry is used without revalidation: `Age` set to the
    /// entry's current age (RFC 9111 §5.1), fields named by a qualified `no-cache` removed
    /// (§5.2.2.4: they must not be reused unvalidated).
    public func headForReuse(now: Date) -> ResponseHead {
        var excluded: Set<String> = ["age"]
        if case .fields(let names) = cacheControl.noCache { excluded.formUnion(names) }
        var fields = headerFields.filter { !excluded.contains($0.name.lowercased()) }.map { ($0.name, $0.value) }
        fields.append(("Age", String(Int(CacheFreshness.age(of: self, now: now)))))
        return ResponseHead(statusCode: statusCode, fields: fields)
    }

    /// The task's `response` when it is answered from this entry without revalidation.
    public func responseSnapshot(now: Date) -> HTTPResponseSnapshot {
        HTTPResponseSnapshot(url: url, head: headForReuse(now: now))
    }

    /// RFC 9111 §3.1: connection-specific fields (and those `Connection` names) are not stored.
    static let hopByHopFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "trailer",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
    ]

    static func connectionSpecificFields(of head: ResponseHead) -> Set<String> {
        let named = head.values(of: "Connection").flatMap { $0.split(separator: ",") }.map { String($0).trimmingSpaces.lowercased() }
        return hopByHopFields.union(named)
    }

    static func storableFields(of head: ResponseHead) -> [CachedHeaderField] {
        let excluded = connectionSpecificFields(of: head)
        return head.fields
            .filter { !excluded.contains($0.name.lowercased()) }
            .map { CachedHeaderField(name: $0.name, value: $0.value) }
    }
}
