/// The parts of Ferry's JSON answers the end-to-end tests look at (decoding ignores the rest,
/// so these tests pin behaviour, not every field of the wire format).
struct TenantAnswer: Decodable, Sendable {
    var id: String
    var name: String
    var status: String
    var apiKey: String?
}

struct SessionAnswer: Decodable, Sendable {
    var id: String
    var state: String
}

struct TaskAnswer: Decodable, Sendable {
    var id: String
    var sessionId: String
    var kind: String
    var state: String
    var countOfBytesReceived: Int64
    var countOfBytesExpectedToReceive: Int64
    var response: ResponseAnswer?
    var error: ErrorAnswer?
}

struct ResponseAnswer: Decodable, Sendable {
    var statusCode: Int
    var url: String?
}

struct ErrorAnswer: Decodable, Sendable {
    var domain: String
    var code: Int
    var localizedDescription: String
    var failingURL: String?
    var resumeData: String?
    var reason: String?
}

struct ReadinessAnswer: Decodable, Sendable {
    var databaseReachable: Bool
    var migrationsApplied: Bool
    var workersRunning: Bool
}

struct ListAnswer<Item: Decodable & Sendable>: Decodable, Sendable {
    var data: [Item]
    var nextCursor: String?
}
