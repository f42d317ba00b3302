import Foundation

/// Where a session is in its life: URLSession's `finishTasksAndInvalidate` and
/// `invalidateAndCancel` lead to `invalidated` once the last task has ended.
public enum SessionState: String, Codable, Sendable, CaseIterable {
    case valid
    /// `finishTasksAndInvalidate`: running tasks finish, new ones are refused.
    case finishing
    /// `invalidateAndCancel`: running tasks are being cancelled.
    case canceling
    case invalidated
}

public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var tenantID: String
    public var configuration: SessionConfiguration
    public var sessionDescription: String?
    public var state: SessionState
    public var createdAt: Date
    public var invalidatedAt: Date?
    /// The tenant's `URLSession.shared` (`/v1/sessions/shared`): made on first use, never invalidated.
    public var isShared: Bool

    public init(
        id: String, tenantID: String, configuration: SessionConfiguration, sessionDescription: String?,
        state: SessionState, createdAt: Date, invalidatedAt: Date?, isShared: Bool = false
    ) {
        self.id = id
        self.tenantID = tenantID
        self.configuration = configuration
        self.sessionDescription = sessionDescription
        self.state = state
        self.createdAt = createdAt
        self.invalidatedAt = invalidatedAt
        self.isShared = isShared
    }

    public var kind: SessionKind { configuration.kind }
    public var acceptsNewTasks: Bool { state == .valid }
}

/// A validated `POST /v1/sessions` body.
public struct SessionCreation: Sendable, Equatable {
    public var configuration: SessionConfiguration
    public var sessionDescription: String?
    public var delegate: DelegateSpec?

    public init(configuration: SessionConfiguration, sessionDescription: String? = nil, delegate: DelegateSpec? = nil) {
        self.configuration = configuration
        self.sessionDescription = sessionDescription
        self.delegate = delegate
    }

    public init(validating value: JSONValue, urlChecker: some URLSyntaxChecker) throws {
        let reader = try FieldReader(value)
        guard let configurationReader = try reader.object("configuration") else {
            throw reader.error("configuration", "is required: an object with at least \"kind\".")
        }
        configuration = try SessionConfiguration(validating: configurationReader)
        sessionDescription = try reader.string("sessionDescription", maxLength: 4096)
        if let delegateReader = try reader.object("delegate") {
            delegate = try DelegateSpec(validating: delegateReader, urlChecker: urlChecker)
        }
        try reader.finish()
    }
}
