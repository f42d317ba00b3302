import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client of Ferry's HTTP API as a tenant program (or an operator) would write it: one
/// function per endpoint, returning decoded answers. Each client has its own URLSession, so
/// a restarted server is never reached through a connection of its previous life.
struct FerryClient: Sendable {
    let baseURL: String
    /// The Bearer token: a tenant's API key, or the operator token for `/admin`.
    let token: String?
    let session: URLSession
    let requestTimeout: TimeInterval

    init(baseURL: String, token: String?, requestTimeout: TimeInterval = 30) {
        self.baseURL = baseURL
        self.token = token
        self.requestTimeout = requestTimeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.timeoutIntervalForResource = 600
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    struct Answer: Sendable {
        var status: Int
        var body: Data
        var headers: [String: String]

        var text: String { String(decoding: body, as: UTF8.self) }

        func decode<T: Decodable>(_ type: T.Type, expecting expected: Set<Int>, _ what: String) throws -> T {
            guard expected.contains(status) else {
                throw HarnessError("\(what): expected \(expected.sorted()), got \(status): \(text.prefix(2000))")
            }
            do {
                return try JSONDecoder().decode(T.self, from: body)
            } catch {
                throw HarnessError("\(what): cannot decode \(T.self) (\(error)) from \(text.prefix(2000))")
            }
        }
    }

    /// One request; `json` is sent as the body with `Content-Type: application/json`.
    func send(
        _ method: String, _ path: String, json: Data? = nil, headers: [String: String] = [:], timeout: TimeInterval? = nil
    ) async throws -> Answer {
        guard let url = URL(string: baseURL + path) else { throw HarnessError("bad URL \(baseURL + path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = timeout ?? requestTimeout
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = json
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if method == "POST" {
            request.httpBody = Data()
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (body, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw HarnessError("\(method) \(path): not an HTTP response") }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Answer(status: http.statusCode, body: body, headers: fields)
    }

    /// Encodes a JSON object written as a Swift literal.
    static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object)
    }
}
