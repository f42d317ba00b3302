/// A validated `PATCH /v1/tasks/{id}` body: the properties URLSessionTask lets its owner change
/// after creation.
/// Absent members keep their value; `"taskDescription": null` clears it.
public struct TaskUpdate: Sendable, Equatable {
    public var priority: Double?
    /// `.some(nil)` clears the description.
    public var taskDescription: String??

    public init(priority: Double? = nil, taskDescription: String?? = nil) {
        self.priority = priority
        self.taskDescription = taskDescription
    }

    public init(validating value: JSONValue) throws {
        let reader = try FieldReader(value)
        priority = try reader.number("priority", in: 0...1)
        if let text = try reader.string("taskDescription", maxLength: 4096) {
            taskDescription = .some(text)
        } else if reader.isExplicitNull("taskDescription") {
            taskDescription = .some(nil)
        }
        try reader.finish()
    }
}
