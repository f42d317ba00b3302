import FerryCore
import Foundation

/// `GET /admin/v1/tasks/{id}`: a tenant's task as the operator sees it for support. Its
/// credentials stay the tenant's (DESIGN §5): the values of the requests' `Authorization`,
/// `Cookie` and `Proxy-Authorization` fields and a URL's password read "[redacted]" ("redacted" in the URL), and resume
/// data is left out (it lets its holder continue the download).
struct SupportTaskView: Encodable, Sendable {
    var tenantId: String
    var task: TaskView

    static let redacted = "[redacted]"

    init(tenantID: String, task: TaskRecord) {
        var task = task
        task.originalRequest = Self.redacting(task.originalRequest)
        task.currentRequest = task.currentRequest.map(Self.redacting)
        // The URL, password and all, is repeated in the response and in the error.
        if let url = task.response?.url { task.response?.url = Self.redactingPassword(url) }
        if let url = task.error?.failingURL { task.error?.failingURL = Self.redactingPassword(url) }
        task.error?.resumeData = nil
        self.tenantId = tenantID
        self.task = TaskView(task)
    }

    static func redacting(_ request: TransferRequest) -> TransferRequest {
        var request = request
        for name in request.allHTTPHeaderFields.keys where RedirectPolicy.credentialFields.contains(name.lowercased()) {
            request.allHTTPHeaderFields[name] = redacted
        }
        request.url = redactingPassword(request.url)
        return request
    }

    static func redactingPassword(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.percentEncodedPassword = "redacted"
        return components.string ?? url
    }
}
