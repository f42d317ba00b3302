import FerryCore
import Foundation

/// The arguments of delegate methods, as event `data`.
enum TaskEventData {
    /// The task as a delegate method receives it: enough to identify it without another call.
    static func summary(
        id: String, taskIdentifier: Int64, kind: TaskKind, state: TaskState, originalRequest: TransferRequest, taskDescription: String?
    ) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id),
            "taskIdentifier": .number(Double(taskIdentifier)),
            "kind": .string(kind.rawValue),
            "state": .string(state.rawValue),
            "originalRequest": (try? JSONValue(encoding: originalRequest)) ?? .null,
        ]
        if let taskDescription { fields["taskDescription"] = .string(taskDescription) }
        return .object(fields)
    }

    static func error(_ error: TransferError?) -> JSONValue {
        guard let error else { return .null }
        return (try? JSONValue(encoding: error)) ?? .null
    }
}
