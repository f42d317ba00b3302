import FerryCore
import FerryStore
import Hummingbird

/// A session's credential storage: `setCredential(_:for:)`, `allCredentials`, `remove`.
/// Passwords go in and are never shown again.
struct CredentialRoutes {
    let services: APIServices

    func register(on router: RouterGroup<TenantContext>) {
        router.put("sessions/:sessionID/credentials") { request, context in
            let id = try context.parameters.require("sessionID")
            let (_, body) = try await JSONBody.read(request, limit: JSONBody.smallLimit)
            let creation = try CredentialCreation(validating: body)
            let credential = try await services.database.credentials.set(
                tenantID: context.tenantID, sessionID: id, space: creation.protectionSpace, user: creation.user, password: creation.password
            )
            return try JSONResponse.make(CredentialView(credential), status: .created)
        }

        router.get("sessions/:sessionID/credentials") { _, context in
            let id = try context.parameters.require("sessionID")
            let credentials = try await services.database.credentials.list(tenantID: context.tenantID, sessionID: id)
            return try JSONResponse.make(["data": credentials.map(CredentialView.init)])
        }

        router.delete("sessions/:sessionID/credentials/:credentialID") { _, context in
            try await services.database.credentials.remove(
                tenantID: context.tenantID, sessionID: try context.parameters.require("sessionID"),
                credentialID: try context.parameters.require("credentialID")
            )
            return Response(status: .noContent)
        }
    }
}

/// A stored credential without its password.
struct CredentialView: Encodable, Sendable {
    var id: String
    var protectionSpace: ProtectionSpace
    var user: String

    init(_ credential: StoredCredential) {
        id = credential.id
        protectionSpace = credential.protectionSpace
        user = credential.user
    }
}
