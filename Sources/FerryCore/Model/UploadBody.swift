/// Where an upload task's body comes from — the `uploadTask(with:from…)` variants.
public enum UploadBody: Sendable, Equatable {
    /// `uploadTask(with:from: Data)`: the bytes came in the creation request.
    case inline([UInt8])
    /// `uploadTask(with:fromFile:)`: a blob the tenant uploaded with `PUT /v1/blobs`.
    case blob(String)
    /// `uploadTask(withStreamedRequest:)`: the client streams it with `PUT /v1/tasks/{id}/body`.
    case stream
}

/// How an upload body is recorded on the task row (the inline bytes themselves are stored apart).
public enum UploadSource: Codable, Sendable, Equatable {
    case inline
    case blob(id: String)
    case stream

    public init(_ body: UploadBody) {
        switch body {
        case .inline: self = .inline
        case .blob(let id): self = .blob(id: id)
        case .stream: self = .stream
        }
    }
}
