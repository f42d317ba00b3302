/// The URLSessionTask subclasses Ferry runs.
public enum TaskKind: String, Codable, Sendable, CaseIterable {
    /// `URLSessionDataTask`: the body is kept (bounded) and read with `GET /v1/tasks/{id}/data`.
    case data
    /// `URLSessionDownloadTask`: the body goes to a file, read with `GET /v1/tasks/{id}/file`.
    case download
    /// `URLSessionUploadTask`: sends a body; the response body is kept like a data task's.
    case upload
}

/// `URLSessionTask.State`.
public enum TaskState: String, Codable, Sendable, CaseIterable {
    case running
    case suspended
    case canceling
    case completed
}

/// `URLSessionTask`'s priority constants.
public enum TaskPriority {
    public static let low = 0.25
    public static let `default` = 0.5
    public static let high = 0.75
}

/// `NSURLSessionTransferSizeUnknown`.
public let transferSizeUnknown: Int64 = -1
