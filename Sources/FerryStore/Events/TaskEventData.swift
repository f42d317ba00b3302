import FerryCore
import Foundation

/// The arguments of delegate methods, as event `data`.
enum TaskEventData {
    /// The task as a delegate method receives it: enough to identify it without another call.
    static func summary(_ task: TaskRecord) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(task.id),
            "taskIdentifier": .number(Double(task.taskIdentifier)),
            "kind": .string(task.kind.rawValue),
            "state": .string(task.state.rawValue),
            "originalRequest": (try? JSONValue(encoding: task.originalRequest)) ?? .null,
        ]
        if let description = task.taskDescription { fields["taskDescription"] = .string(description) }
        return .object(fields)
    }

    static func error(_ error: TransferError?) -> JSONValue {
        guard let error else { return .null }
        return (try? JSONValue(encoding: error)) ?? .null
    }
}
