import FerryCore
import FerryStore
import Hummingbird
import Logging
import NIOCore

/// The context of every request: Hummingbird's core storage, a request id for logs and the
/// `X-Request-ID` header, and the caller once a middleware has identified it.
public struct FerryRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var requestID: String
    /// Set by `TenantAuthenticationMiddleware` for tenant routes.
    public var tenant: TenantRecord?
    /// Set by `AdminAuthenticationMiddleware` for operator routes.
    public var isOperator = false
    /// The connection the request came on, for closing it after an answer (`RequestBodyDrainMiddleware`).
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
        // Random, not Hummingbird's RequestID: that one counts every request of the process, so
        // two of a tenant's answers would tell it how many requests everyone else made between.
        requestID = IDs.make("req")
        logger[metadataKey: "request"] = .string(requestID)
    }

    /// Request bodies are read with explicit limits per route (see `JSONBody`); this bound is
    /// only for Hummingbird's own decoding helpers, which Ferry does not use.
    public var maxUploadSize: Int { 16 * 1024 * 1024 }
}

/// The context of tenant routes: the tenant is not optional, so no handler can forget it.
public struct TenantContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let requestID: String
    public let tenant: TenantRecord

    public init(context: FerryRequestContext) throws {
        guard let tenant = context.tenant else { throw APIError.unauthorized("A tenant API key is required.") }
        self.coreContext = context.coreContext
        self.requestID = context.requestID
        self.tenant = tenant
        self.logger[metadataKey: "tenant"] = .string(tenant.id)
    }

    public var tenantID: String { tenant.id }
    public var maxUploadSize: Int { 16 * 1024 * 1024 }
}

/// The context of operator routes.
public struct OperatorContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let requestID: String

    public init(context: FerryRequestContext) throws {
        guard context.isOperator else { throw APIError.unauthorized("The operator token is required.") }
        self.coreContext = context.coreContext
        self.requestID = context.requestID
    }

    public var maxUploadSize: Int { 1024 * 1024 }
}
