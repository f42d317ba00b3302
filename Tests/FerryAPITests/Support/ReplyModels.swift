import FerryCore

/// The parts of the API's wire format the tests read, decoded as a client would.

struct ProblemReply: Decodable, Sendable {
    var type: String
    var title: String
    var status: Int
    var detail: String
    var instance: String?
    var field: String?
}

struct TenantReply: Decodable, Sendable {
    var id: String
    var name: String
    var status: String
    var apiKey: String?
    var quotas: JSONValue
}

struct SessionReply: Decodable, Sendable {
    var id: String
    var state: String
    var configuration: JSONValue
    var sessionDescription: String?
}

struct TaskReply: Decodable, Sendable {
    struct Failure: Decodable, Sendable {
        var domain: String
        var code: Int
        var resumeData: String?
    }

    struct Response: Decodable, Sendable {
        var statusCode: Int
    }

    var id: String
    var taskIdentifier: Int
    var sessionId: String
    var kind: String
    var state: String
    var priority: Double
    var taskDescription: String?
    var originalRequest: JSONValue
    var response: Response?
    var error: Failure?
    var countOfBytesReceived: Int64
}

struct ListReply<Item: Decodable & Sendable>: Decodable, Sendable {
    var data: [Item]
    var nextCursor: String?
}

struct ResumeDataReply: Decodable, Sendable {
    var resumeData: String?
}
