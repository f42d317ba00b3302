import FerryCore

/// `getTasksWithCompletionHandler`'s three arrays. A data task that became a download
/// (`becomeDownload`) is listed as the download it now is.
struct GetTasksView: Encodable, Sendable {
    var dataTasks: [TaskView] = []
    var uploadTasks: [TaskView] = []
    var downloadTasks: [TaskView] = []

    init(_ tasks: [TaskRecord]) {
        for task in tasks {
            switch task.kind {
            case .data: dataTasks.append(TaskView(task))
            case .upload: uploadTasks.append(TaskView(task))
            case .download: downloadTasks.append(TaskView(task))
            }
        }
    }
}

/// `getAllTasks`' one array.
struct AllTasksView: Encodable, Sendable {
    var tasks: [TaskView]
}
