import FerryCore

/// `GET /admin/v1/tasks/{id}`: a tenant's task as the operator sees it for support. Its
/// credentials stay the tenant's (DESIGN §5): the requests' credential fields and a URL's
/// password are redacted (`TransferRequest.redactingCredentials`), wherever the URL is repeated,
/// and resume data is left out (it lets its holder continue the download).
struct SupportTaskView: Encodable, Sendable {
    var tenantId: String
    var task: TaskView

    init(tenantID: String, task: TaskRecord) {
        var task = task
        task.originalRequest = task.originalRequest.redactingCredentials
        task.currentRequest = task.currentRequest?.redactingCredentials
        if let url = task.response?.url { task.response?.url = TransferRequest.redactingPassword(in: url) }
        if let url = task.error?.failingURL { task.error?.failingURL = TransferRequest.redactingPassword(in: url) }
        task.error?.resumeData = nil
        self.tenantId = tenantID
        self.task = TaskView(task)
    }
}
