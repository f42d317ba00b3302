import FerryCore
import Foundation

/// A task with URLSessionTask's fields. Absent values are explicit nulls (`error: null` means
/// success once `state` is `completed`), so clients can test fields without guessing.
struct TaskView: Encodable, Sendable {
    var task: TaskRecord

    init(_ task: TaskRecord) {
        self.task = task
    }

    enum CodingKeys: String, CodingKey {
        case id, taskIdentifier, sessionId, kind, state, priority, taskDescription, earliestBeginDate
        case originalRequest, currentRequest, response, error, progress
        case countOfBytesReceived, countOfBytesSent, countOfBytesExpectedToReceive, countOfBytesExpectedToSend
        case countOfBytesClientExpectsToSend, countOfBytesClientExpectsToReceive
        case createdAt, startedAt, completedAt, links
    }

    struct Progress: Encodable {
        var fractionCompleted: Double
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(task.id, forKey: .id)
        try container.encode(task.taskIdentifier, forKey: .taskIdentifier)
        try container.encode(task.sessionID, forKey: .sessionId)
        try container.encode(task.kind.rawValue, forKey: .kind)
        try container.encode(task.state.rawValue, forKey: .state)
        try container.encode(task.priority, forKey: .priority)
        try container.encode(task.taskDescription, forKey: .taskDescription)
        try container.encode(task.earliestBeginDate, forKey: .earliestBeginDate)
        try container.encode(task.originalRequest, forKey: .originalRequest)
        try container.encode(task.currentRequest ?? task.originalRequest, forKey: .currentRequest)
        try container.encode(task.response, forKey: .response)
        try container.encode(task.error, forKey: .error)
        try container.encode(Progress(fractionCompleted: task.fractionCompleted), forKey: .progress)
        try container.encode(task.countOfBytesReceived, forKey: .countOfBytesReceived)
        try container.encode(task.countOfBytesSent, forKey: .countOfBytesSent)
        try container.encode(task.countOfBytesExpectedToReceive, forKey: .countOfBytesExpectedToReceive)
        try container.encode(task.countOfBytesExpectedToSend, forKey: .countOfBytesExpectedToSend)
        try container.encode(task.countOfBytesClientExpectsToSend, forKey: .countOfBytesClientExpectsToSend)
        try container.encode(task.countOfBytesClientExpectsToReceive, forKey: .countOfBytesClientExpectsToReceive)
        try container.encode(task.createdAt, forKey: .createdAt)
        try container.encode(task.startedAt, forKey: .startedAt)
        try container.encode(task.completedAt, forKey: .completedAt)
        try container.encode(links, forKey: .links)
    }

    private var links: [String: String] {
        var links = [
            "self": "/v1/tasks/\(task.id)",
            "events": "/v1/tasks/\(task.id)/events",
            "metrics": "/v1/tasks/\(task.id)/metrics",
        ]
        switch task.kind {
        case .download: links["file"] = "/v1/tasks/\(task.id)/file"
        case .data, .upload: links["data"] = "/v1/tasks/\(task.id)/data"
        }
        return links
    }
}
