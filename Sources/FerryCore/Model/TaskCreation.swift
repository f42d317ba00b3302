import Foundation

/// A validated `POST /v1/sessions/{id}/tasks` body: which URLSession factory method the tenant called.
public struct TaskCreation: Sendable, Equatable {
    public var kind: TaskKind
    /// Absent only when the task continues from `resumeData`, which carries its own request.
    public var request: TransferRequest?
    /// `request.httpBody`, for data and download tasks.
    public var requestBody: [UInt8]?
    /// For upload tasks only.
    public var uploadBody: UploadBody?
    /// `downloadTask(withResumeData:)`: the opaque token of `cancelByProducingResumeData`.
    public var resumeData: String?
    public var priority: Double = TaskPriority.default
    public var taskDescription: String?
    public var earliestBeginDate: Date?
    /// The client's estimates (`NSURLSessionTransferSizeUnknown` when not given), shown back;
    /// URLSession uses them to schedule background transfers, Ferry has nothing to schedule by.
    public var countOfBytesClientExpectsToSend: Int64 = transferSizeUnknown
    public var countOfBytesClientExpectsToReceive: Int64 = transferSizeUnknown
    public var delegate: DelegateSpec?
    /// `"resume": true` starts the task at once instead of leaving it suspended.
    public var startsImmediately: Bool = false

    /// Inline bodies travel base64-encoded inside the JSON body; larger ones belong in blobs.
    public static let maximumInlineBodyBytes = 8 * 1024 * 1024
    /// `countOfBytesClientExpectsToSend/Receive`: -1 (unknown) or a byte count JSON carries exactly.
    public static let clientExpectedBytes = -1...(1 << 53)

    public init(kind: TaskKind, request: TransferRequest?) {
        self.kind = kind
        self.request = request
    }
}

extension TaskCreation {
    /// `path` names the creation in error messages when it is part of a larger document
    /// (`tasks[3]` in a batch).
    public init(validating value: JSONValue, path: String = "", urlChecker: some URLSyntaxChecker) throws {
        let reader = try FieldReader(value, path: path)
        guard let kind = try reader.choice("kind", as: TaskKind.self) else {
            throw reader.error("kind", "is required: \"data\", \"download\" or \"upload\".")
        }
        self.init(kind: kind, request: nil)

        resumeData = try reader.string("resumeData", maxLength: 64 * 1024, allowEmpty: false)
        if resumeData != nil, kind != .download {
            throw reader.error("resumeData", "is only for download tasks.")
        }
        if let requestReader = try reader.object("request") {
            let (request, body) = try Self.readRequest(requestReader, kind: kind, urlChecker: urlChecker)
            self.request = request
            self.requestBody = body
        } else if resumeData == nil {
            throw reader.error("request", "is required (an object with at least \"url\").")
        }
        if resumeData != nil, request != nil {
            throw reader.error("request", "must be absent when resumeData is given: the resume data carries the request.")
        }

        if let bodyReader = try reader.object("body") {
            guard kind == .upload else {
                throw reader.error("body", "is only for upload tasks; a data or download task sends request.httpBody.")
            }
            uploadBody = try Self.readUploadBody(bodyReader)
        } else if kind == .upload {
            throw reader.error("body", "is required for an upload task: {\"base64\"}, {\"text\"}, {\"blob\"} or {\"stream\": true}.")
        }
        if kind == .upload, requestBody != nil {
            throw ValidationError(field: reader.fieldPath("request") + ".httpBody", message: "must be absent for an upload task; the body comes from \"body\".")
        }
        switch uploadBody {
        case .inline(let bytes): request?.httpBodyLength = Int64(bytes.count)
        case .stream: request?.httpBodyLength = transferSizeUnknown
        case .blob, nil: break  // a blob's length is known once it is looked up
        }

        if let value = try reader.number("priority", in: 0...1) { priority = value }
        taskDescription = try reader.string("taskDescription", maxLength: 4096)
        if let text = try reader.string("earliestBeginDate", maxLength: 64) {
            guard let date = ISO8601Parsing.date(from: text) else {
                throw reader.error("earliestBeginDate", "must be an ISO 8601 date-time such as \"2026-01-31T12:00:00Z\".")
            }
            earliestBeginDate = date
        }
        if let value = try reader.integer("countOfBytesClientExpectsToSend", in: Self.clientExpectedBytes) {
            countOfBytesClientExpectsToSend = Int64(value)
        }
        if let value = try reader.integer("countOfBytesClientExpectsToReceive", in: Self.clientExpectedBytes) {
            countOfBytesClientExpectsToReceive = Int64(value)
        }
        if let delegateReader = try reader.object("delegate") {
            delegate = try DelegateSpec(validating: delegateReader, urlChecker: urlChecker)
        }
        startsImmediately = try reader.bool("resume") ?? false
        try reader.finish()
    }

    private static func readRequest(
        _ reader: FieldReader, kind: TaskKind, urlChecker: some URLSyntaxChecker
    ) throws -> (TransferRequest, [UInt8]?) {
        let text = try reader.requiredString("url", maxLength: 8192)
        let url = try urlChecker.check(text, field: reader.fieldPath("url")).url
        var request = TransferRequest(url: url, httpMethod: kind == .upload ? "POST" : "GET")
        if let method = try reader.string("httpMethod", maxLength: 32, allowEmpty: false) {
            guard method.utf8.allSatisfy(HTTPHeaderRules.isTokenByte) else {
                throw reader.error("httpMethod", "must be an HTTP method token such as \"GET\" or \"POST\".")
            }
            guard !HTTPHeaderRules.forbiddenMethods.contains(method.uppercased()) else {
                throw reader.error("httpMethod", "\(method) is not allowed.")
            }
            request.httpMethod = method
        }
        if let headers = try reader.stringMap("allHTTPHeaderFields", maxCount: HTTPHeaderRules.maximumCount) {
            try HTTPHeaderRules.validate(headers, field: reader.fieldPath("allHTTPHeaderFields"))
            request.allHTTPHeaderFields = headers
        }
        request.timeoutInterval = try reader.number("timeoutInterval", in: 0.001...SessionConfiguration.maximumTimeout)
        request.cachePolicy = try reader.choice("cachePolicy", as: RequestCachePolicy.self)
        request.allowsCellularAccess = try reader.bool("allowsCellularAccess")
        request.allowsExpensiveNetworkAccess = try reader.bool("allowsExpensiveNetworkAccess")
        request.allowsConstrainedNetworkAccess = try reader.bool("allowsConstrainedNetworkAccess")
        request.networkServiceType = try reader.choice("networkServiceType", as: NetworkServiceType.self)
        var body: [UInt8]?
        if let encoded = try reader.string("httpBody", maxLength: maximumInlineBodyBytes * 4 / 3 + 4) {
            guard let data = Data(base64Encoded: encoded) else {
                throw reader.error("httpBody", "must be base64.")
            }
            body = Array(data)
            request.httpBodyLength = Int64(data.count)
        }
        try reader.finish()
        return (request, body)
    }

    private static func readUploadBody(_ reader: FieldReader) throws -> UploadBody {
        let sources = ["base64", "text", "blob", "stream"].filter(reader.contains)
        guard sources.count == 1 else {
            throw ValidationError(
                field: reader.path,
                message: "must have exactly one of \"base64\", \"text\", \"blob\" or \"stream\"."
            )
        }
        let body: UploadBody
        if let encoded = try reader.string("base64", maxLength: maximumInlineBodyBytes * 4 / 3 + 4) {
            guard let data = Data(base64Encoded: encoded) else { throw reader.error("base64", "must be base64.") }
            body = .inline(Array(data))
        } else if let text = try reader.string("text", maxLength: maximumInlineBodyBytes) {
            body = .inline(Array(text.utf8))
        } else if let blob = try reader.string("blob", maxLength: 64, allowEmpty: false) {
            guard blob.hasPrefix("blb_") else { throw reader.error("blob", "must be a blob id (\"blb_…\").") }
            body = .blob(blob)
        } else if try reader.bool("stream") == true {
            body = .stream
        } else {
            throw reader.error("stream", "must be true when given.")
        }
        try reader.finish()
        return body
    }
}
